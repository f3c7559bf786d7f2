import t from 'tap'
import { changedFields } from '@svc/audit'

t.test('an update records only the fields that changed', async (t) => {
  t.same(changedFields({ name: 'A', slug: 'a', size: 1 }, { name: 'B', slug: 'a', size: 1 }), {
    before: { name: 'A' },
    after: { name: 'B' },
  })
  t.same(changedFields({ when: new Date('2026-01-01T00:00:00Z') }, { when: new Date('2026-01-01T00:00:00Z') }), { before: {}, after: {} })
  t.same(changedFields({ tags: ['a'] }, { tags: ['a', 'b'] }), { before: { tags: ['a'] }, after: { tags: ['a', 'b'] } })
})

t.test('creations and deletions list the whole entity', async (t) => {
  t.same(changedFields(null, { name: 'New', removed: undefined }), { after: { name: 'New', removed: null } })
  t.same(changedFields({ name: 'Old' }, null), { before: { name: 'Old' } })
  t.same(changedFields(undefined, undefined), {})
})

t.test('secrets never reach the log, only the fact that they changed', async (t) => {
  const result = changedFields(
    { signingSecret: 'old-secret', apiKeyHash: 'h1', password: 'p', name: 'x' },
    { signingSecret: 'new-secret', apiKeyHash: 'h2', password: 'q', name: 'x', accessToken: 't' },
  )
  t.same(result, {
    before: { signingSecret: '[redacted]', apiKeyHash: '[redacted]', password: '[redacted]', accessToken: '[redacted]' },
    after: { signingSecret: '[redacted]', apiKeyHash: '[redacted]', password: '[redacted]', accessToken: '[redacted]' },
  })
  t.notMatch(JSON.stringify(changedFields(null, { token: 'scim_abc' })), /scim_abc/)
})
