import t from 'tap'
import { buildApp } from '@svc/platform'
import { startTestService } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service

const adminToken = service.token('admin@example.com', ['PlatformAdmins'])
const userToken = service.token('customer@example.com')

async function me(token: string, impersonate?: string) {
  return app.inject({
    method: 'GET',
    url: '/api/v1/users/me',
    headers: { authorization: `Bearer ${token}`, ...(impersonate === undefined ? {} : { 'x-impersonate-user-id': impersonate }) },
  })
}

const admin = (await me(adminToken)).json()
const customer = (await me(userToken)).json()

t.test('a platform admin acts as another user and keeps their own identity aside', async (t) => {
  const response = await me(adminToken, customer.userId)
  t.equal(response.statusCode, 200)
  t.same(response.json(), {
    userId: customer.userId,
    email: 'customer@example.com',
    groups: [],
    isPlatformAdmin: false,
    originalUserId: admin.userId,
    originalEmail: 'admin@example.com',
    isEmployee: false,
    displayName: null,
    name: null,
    givenName: null,
    familyName: null,
    timeZone: null,
    platformRole: null,
  })
})

t.test('anyone outside PlatformAdmins gets 403 for trying', async (t) => {
  const response = await me(userToken, admin.userId)
  t.equal(response.statusCode, 403)
  t.equal(response.json().code, 'FORBIDDEN')
})

t.test('an unknown or malformed user id is 404', async (t) => {
  for (const id of ['6c0a2a43-2b6f-4b51-9c1b-1f0d6f0e9a11', 'not-a-uuid', '']) {
    const response = await me(adminToken, id)
    t.equal(response.statusCode, 404, `id ${JSON.stringify(id)}`)
    t.equal(response.json().code, 'NOT_FOUND')
  }
})

t.test('changes while impersonating apply to the impersonated user', async (t) => {
  const response = await app.inject({
    method: 'PATCH',
    url: '/api/v1/users/me',
    headers: { authorization: `Bearer ${adminToken}`, 'x-impersonate-user-id': customer.userId },
    payload: { displayName: 'Set by support' },
  })
  t.equal(response.statusCode, 200)
  const rows = await app.database.db
    .selectFrom('core.users')
    .select(['id', 'displayName'])
    .where('id', 'in', [admin.userId, customer.userId])
    .execute()
  t.same(Object.fromEntries(rows.map((row) => [row.id, row.displayName])), { [admin.userId]: null, [customer.userId]: 'Set by support' })
})

t.test('a user who holds a platform role cannot be impersonated', async (t) => {
  const staffToken = service.token('staff@example.com')
  const staff = (await me(staffToken)).json()
  await app.database.db.updateTable('core.users').set({ platformRole: 'ADMIN' }).where('id', '=', staff.userId).execute()
  app.sessions.forget(staff.userId)
  const response = await me(adminToken, staff.userId)
  t.equal(response.statusCode, 403)
  t.match(response.json().message, /platform role/)
})

t.test('the first request of an impersonation session is an audit entry naming both; reads included, once', async (t) => {
  const supportToken = service.token('support@example.com', ['PlatformAdmins'])
  const support = (await me(supportToken)).json()
  const entries = () =>
    app.database.db
      .selectFrom('core.auditLogs')
      .select(['actorUserId', 'actorOriginalUserId', 'entityId'])
      .where('action', '=', 'user.impersonation_started')
      .where('actorOriginalUserId', '=', support.userId)
      .execute()
  t.same(await entries(), [])
  t.equal((await me(supportToken, customer.userId)).statusCode, 200, 'a read')
  t.equal((await me(supportToken, customer.userId)).statusCode, 200)
  t.same(await entries(), [{ actorUserId: customer.userId, actorOriginalUserId: support.userId, entityId: customer.userId }])
})
