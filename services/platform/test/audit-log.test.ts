import t from 'tap'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, startTestService } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const owner = await service.signIn('owner@audit.example')
const colleague = await service.signIn('colleague@audit.example')
const support = await service.signIn('support@audit.example', ['PlatformAdmins'])
const { id: orgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'Audited', slug: 'audited' } })
).json()
const url = `/api/v1/organizations/${orgId}/audit-logs`

await app.inject({
  method: 'POST',
  url: `/api/v1/organizations/${orgId}/members`,
  headers: { ...owner.headers, 'user-agent': 'audit-test/1.0', 'x-request-id': 'req-add-colleague' },
  payload: { email: colleague.email, role: 'admin' },
})
await acceptInvitationOf(app, colleague)
// A platform admin, impersonating the owner, renames the organization.
await app.inject({
  method: 'PATCH',
  url: `/api/v1/organizations/${orgId}`,
  headers: { ...support.headers, 'x-impersonate-user-id': owner.userId },
  payload: { name: 'Audited Inc.' },
})
await app.inject({ method: 'PATCH', url: `/api/v1/organizations/${orgId}`, headers: colleague.headers, payload: { slug: 'audited-inc' } })

async function list(query = '', headers = owner.headers) {
  const response = await app.inject({ method: 'GET', url: `${url}${query}`, headers })
  t.equal(response.statusCode, 200, `GET ${query}`)
  return response.json()
}

t.test('every change is one entry, newest first, with actor, request and changed fields', async (t) => {
  const { data, meta } = await list()
  t.equal(meta.total, 7)
  const actions = data.map((entry: { action: string }) => entry.action)
  t.same(actions.slice(0, 3), ['organization.updated', 'organization.updated', 'invitation.accepted'])
  // What one transaction wrote shares its timestamp: the invitation with its membership, the
  // creation with the creator's membership.
  t.same(actions.slice(3, 5).sort(), ['invitation.sent', 'member.added'])
  t.same(actions.slice(5).sort(), ['member.added', 'organization.created'])
  t.match(data[0], {
    actor: { type: 'user', userId: colleague.userId, originalUserId: null },
    changes: { before: { slug: 'audited' }, after: { slug: 'audited-inc' } },
  })
  const added = data.find(
    (entry: { userAgent: string | null; action: string }) => entry.userAgent === 'audit-test/1.0' && entry.action === 'member.added',
  )
  t.not(added.requestId, 'req-add-colleague', "the request id is the service's own, not the caller's")
  t.match(added.requestId, /^[0-9a-f-]{36}$/)
  t.match(added, {
    product: 'platform',
    entityType: 'member',
    action: 'member.added',
    userAgent: 'audit-test/1.0',
    ip: '127.0.0.1',
    changes: { after: { userId: colleague.userId, email: colleague.email, role: 'admin' } },
  })
  const times = data.map((entry: { createdAt: string }) => Date.parse(entry.createdAt))
  t.same(
    times,
    [...times].sort((a, b) => b - a),
  )
})

t.test('an impersonated change names both the user and the platform admin', async (t) => {
  const { data } = await list(`?action=organization.updated&actorId=${owner.userId}`)
  t.equal(data.length, 1)
  t.match(data[0].actor, { type: 'user', userId: owner.userId, originalUserId: support.userId })
  t.same(data[0].changes, { before: { name: 'Audited' }, after: { name: 'Audited Inc.' } })
})

t.test('filters: product, entity type, action, actor, time range, and all together', async (t) => {
  t.equal((await list('?entityType=member')).meta.total, 2)
  t.equal((await list('?action=member.added')).meta.total, 2)
  t.equal((await list(`?actorId=${colleague.userId}`)).meta.total, 2, 'accepting the invitation and renaming')
  t.equal((await list('?product=platform')).meta.total, 7)
  t.equal((await list('?product=alerting')).meta.total, 0)
  const future = new Date(Date.now() + 60_000).toISOString()
  const past = new Date(Date.now() - 60_000).toISOString()
  t.equal((await list(`?from=${future}`)).meta.total, 0)
  t.equal((await list(`?from=${past}&to=${future}`)).meta.total, 7)
  const combined = await list(
    `?product=platform&entityType=organization&action=organization.updated&actorId=${colleague.userId}&from=${past}&to=${future}`,
  )
  t.equal(combined.meta.total, 1)
  const paged = await list('?limit=2&page=4')
  t.same(paged.meta, { page: 4, limit: 2, total: 7 })
  t.equal(paged.data.length, 1)
})

t.test('bad filters are 400s', async (t) => {
  for (const query of [
    '?product=billing',
    '?actorId=someone',
    '?from=yesterday',
    `?from=${new Date().toISOString()}&to=2020-01-01T00:00:00Z`,
    '?limit=0',
  ]) {
    const response = await app.inject({ method: 'GET', url: `${url}${query}`, headers: owner.headers })
    t.equal(response.statusCode, 400, query)
    t.equal(response.json().code, 'VALIDATION_FAILED')
  }
})

t.test('no route changes or deletes entries', async (t) => {
  const entry = (await list()).data[0]
  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    t.equal((await app.inject({ method, url: `${url}/${entry.id}`, headers: owner.headers, payload: {} })).statusCode, 404)
    t.equal((await app.inject({ method, url, headers: owner.headers, payload: {} })).statusCode, 404)
  }
  t.equal((await list()).meta.total, 7)
})

t.test('changes outside an organization are recorded too', async (t) => {
  await app.inject({ method: 'PATCH', url: '/api/v1/users/me', headers: colleague.headers, payload: { timeZone: 'Europe/Paris' } })
  const entry = await db
    .selectFrom('core.auditLogs')
    .selectAll()
    .where('action', '=', 'user.updated')
    .where('entityId', '=', colleague.userId)
    .executeTakeFirstOrThrow()
  t.match(entry, {
    organizationId: null,
    actorUserId: colleague.userId,
    changes: { before: { timeZone: null }, after: { timeZone: 'Europe/Paris' } },
  })
  await app.inject({
    method: 'PUT',
    url: `/api/v1/admin/users/${colleague.userId}/platform-role`,
    headers: support.headers,
    payload: { platformRole: 'ADMIN' },
  })
  const roleEntry = await db
    .selectFrom('core.auditLogs')
    .selectAll()
    .where('action', '=', 'user.platform_role_changed')
    .executeTakeFirstOrThrow()
  t.match(roleEntry, {
    actorUserId: support.userId,
    entityId: colleague.userId,
    changes: { before: { platformRole: null }, after: { platformRole: 'ADMIN' } },
  })
})
