import t from 'tap'
import { parseAttributePath, parseFilter } from '../src/scim/filter/parse.js'

t.test('precedence: not binds tightest, then and, then or', async (t) => {
  t.same(parseFilter('a eq 1 or b eq 2 and not (c pr)'), {
    kind: 'or',
    left: { kind: 'compare', path: { name: 'a' }, operator: 'eq', value: 1 },
    right: {
      kind: 'and',
      left: { kind: 'compare', path: { name: 'b' }, operator: 'eq', value: 2 },
      right: { kind: 'not', filter: { kind: 'present', path: { name: 'c' } } },
    },
  })
})

t.test('values: JSON strings with escapes, literals in any case, numbers, and bare words', async (t) => {
  const value = (filter: string) => (parseFilter(filter) as { value: unknown }).value
  t.equal(value('title eq "say \\"hi\\""'), 'say "hi"')
  t.equal(value('active eq TRUE'), true)
  t.equal(value('active eq False'), false)
  t.equal(value('title eq null'), null)
  t.equal(value('x gt -1.5e3'), -1500)
  t.equal(value('userName sw O'), 'O')
})

t.test('attribute paths: sub-attributes, URNs, the core URN dropped', async (t) => {
  t.same(parseAttributePath('name.FamilyName'), { name: 'name', sub: 'familyname' })
  t.same(parseAttributePath('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value'), {
    schema: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:user',
    name: 'manager',
    sub: 'value',
  })
  t.same(parseAttributePath('urn:ietf:params:scim:schemas:core:2.0:User:userName'), { name: 'username' })
  t.throws(() => parseAttributePath('a.b.c'), { name: 'ScimError', scimType: 'invalidFilter' })
  t.throws(() => parseAttributePath('1abc'), { name: 'ScimError', scimType: 'invalidFilter' })
})

t.test('what is not a filter is invalidFilter', async (t) => {
  for (const text of [
    '',
    '   ',
    '"x"',
    'userName',
    'userName eq',
    'userName eq "x" and',
    'not userName pr',
    '(userName pr',
    'emails[type eq "x"',
    'emails.value[type eq "x"]',
    'a eq "unterminated',
    'a eq "bad \\q escape"',
    ')',
  ]) {
    t.throws(() => parseFilter(text), { name: 'ScimError', statusCode: 400, scimType: 'invalidFilter' }, JSON.stringify(text))
  }
})
