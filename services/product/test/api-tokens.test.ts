import t from 'tap'
import { buildApp as buildPlatform } from '@svc/platform'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Organization API tokens (decision 0030) on both services: what CI and configuration as code use.
const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const platform = await buildPlatform(service.config, service.resources)
t.teardown(() => platform.close())
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'tokens', { admin: { alerting: 'manager' } })
const [owner, admin, stranger] = ['owner', 'admin', 'stranger'].map(person)
await db.updateTable('core.organizationMembers').set({ role: 'admin' }).where('userId', '=', admin!.userId).execute()

type Who = { headers: { authorization: string } }
const bearer = (token: string): Who => ({ headers: { authorization: `Bearer ${token}` } })
const send = (server: typeof app, who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  server.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const tokens = `/api/v1/organizations/${orgId}/api-tokens`
const policies = `/api/v1/organizations/${orgId}/escalation-policies`
const policy = (name: string) => ({ name, steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: owner!.userId }] }] })

async function mint(who: Who, payload: object) {
  const created = await send(platform, who, 'POST', tokens, { name: 'CI', ...payload })
  if (created.statusCode !== 201) throw new Error(`no token: ${created.body}`)
  return created.json() as { id: string; token: string; prefix: string }
}

t.test('a token acts on its organization’s routes of both services with the roles it was given', async (t) => {
  const created = await mint(owner!, { productRoles: { alerting: 'manager', statuspages: 'viewer' } })
  t.match(created.token, /^dvx_[\w-]{43}$/)
  t.equal(created.prefix, created.token.slice(0, 12))
  const listed = (await send(platform, owner!, 'GET', tokens)).json().data
  t.match(listed, [{ id: created.id, name: 'CI', productRoles: { alerting: 'manager', statuspages: 'viewer' }, lastUsedAt: null }])
  t.notMatch(JSON.stringify(listed), created.token.slice(12), 'shown once: never listed')

  const ci = bearer(created.token)
  const made = await send(app, ci, 'POST', policies, policy('From CI'))
  t.equal(made.statusCode, 201, made.body)
  t.equal((await send(app, ci, 'GET', policies)).statusCode, 200)
  t.equal((await send(app, ci, 'GET', `/api/v1/statuspages/organizations/${orgId}/pages`)).statusCode, 200)
  const page = await send(app, ci, 'POST', `/api/v1/statuspages/organizations/${orgId}/pages`, { name: 'X', slug: 'tokens-x' })
  t.equal(page.statusCode, 403, 'a status pages viewer')
  t.equal((await send(app, ci, 'GET', `/api/v1/synthetics/organizations/${orgId}/checks`)).statusCode, 403, 'no synthetics role')
  t.equal((await send(platform, ci, 'GET', `/api/v1/organizations/${orgId}/members`)).statusCode, 200, 'a member of its organization')

  const entry = await db
    .selectFrom('core.auditLogs')
    .select(['actorType', 'actorUserId', 'actorTokenId'])
    .where('entityId', '=', made.json().id)
    .executeTakeFirstOrThrow()
  t.same(entry, { actorType: 'api_token', actorUserId: owner!.userId, actorTokenId: created.id }, 'audited as the token, for its creator')
  const audit = (await send(platform, owner!, 'GET', `/api/v1/organizations/${orgId}/audit-logs?entityType=escalation_policy`)).json()
  t.match(audit.data[0].actor, { type: 'api_token', userId: owner!.userId, tokenId: created.id })
  t.ok((await send(platform, owner!, 'GET', tokens)).json().data[0].lastUsedAt, 'its last use is kept')
  t.equal((await send(app, ci, 'GET', policies)).headers['x-ratelimit-limit'], '1200', 'limited per token')
})

t.test('a token never acts as more than a member, nor outside its organization', async (t) => {
  const ci = bearer((await mint(owner!, { productRoles: { alerting: 'admin' } })).token)
  const minted = await send(platform, ci, 'POST', tokens, { name: 'Another', productRoles: { alerting: 'viewer' } })
  t.equal(minted.statusCode, 403, 'a token cannot mint tokens')
  t.equal((await send(platform, ci, 'PATCH', `/api/v1/organizations/${orgId}`, { name: 'Renamed' })).statusCode, 403)
  const me = await send(platform, ci, 'GET', '/api/v1/users/me')
  t.equal(me.statusCode, 403)
  t.match(me.json().message, /only on its organization's routes/)
  t.equal((await send(app, ci, 'GET', '/api/v1/users/me/notifications')).statusCode, 403, 'a personal route of the product')
  t.equal((await send(platform, ci, 'GET', `/api/v1/admin/users/${owner!.userId}/activity`)).statusCode, 403, 'a platform-admin route')
  const elsewhere = await send(app, ci, 'GET', `/api/v1/organizations/${otherOrgId}/escalation-policies`)
  t.equal(elsewhere.statusCode, 404, 'another organization is not there')
  const impersonating = await app.inject({
    method: 'GET',
    url: policies,
    headers: { ...ci.headers, 'x-impersonate-user-id': admin!.userId },
  })
  t.equal(impersonating.statusCode, 403)
  t.equal((await send(app, bearer('dvx_not-a-token'), 'GET', policies)).statusCode, 401)
  t.equal((await send(app, stranger!, 'GET', `/api/v1/organizations/${orgId}/escalation-policies`)).statusCode, 404)
})

t.test('a token holds no more than its creator, then or now', async (t) => {
  const above = await send(platform, admin!, 'POST', tokens, { name: 'Too much', productRoles: { alerting: 'admin' } })
  t.equal(above.statusCode, 400)
  t.match(above.json().message, /productRoles\/alerting.*above your own role there \(manager\)/)
  const none = await send(platform, admin!, 'POST', tokens, { name: 'Nothing', productRoles: {} })
  t.equal(none.statusCode, 400)
  const past = await send(platform, admin!, 'POST', tokens, {
    name: 'Old',
    productRoles: { alerting: 'viewer' },
    expiresAt: '2020-01-01T00:00:00Z',
  })
  t.equal(past.statusCode, 400)
  t.equal((await send(platform, admin!, 'GET', tokens)).json().data.length, 2, 'refusals create nothing')

  const ci = bearer((await mint(admin!, { productRoles: { alerting: 'manager' } })).token)
  t.equal((await send(app, ci, 'POST', policies, policy('By the admin’s token'))).statusCode, 201)
  const member = await db.selectFrom('core.organizationMembers').select('id').where('userId', '=', admin!.userId).executeTakeFirstOrThrow()
  await db.updateTable('core.orgProductRoles').set({ role: 'viewer' }).where('memberId', '=', member.id).execute()
  await until(
    'the token to lose what its creator lost',
    async () => (await send(app, ci, 'POST', policies, policy('Again'))).statusCode === 403,
  )
  t.equal((await send(app, ci, 'GET', policies)).statusCode, 200, 'it reads as its creator still may')

  await db.updateTable('core.organizationMembers').set({ suspendedAt: new Date() }).where('id', '=', member.id).execute()
  t.equal((await send(app, ci, 'GET', policies)).statusCode, 401, 'a suspended creator’s token stops')
})

t.test('a revoked or expired token authenticates nothing', async (t) => {
  const created = await mint(owner!, { productRoles: { alerting: 'viewer' }, expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
  const ci = bearer(created.token)
  t.equal((await send(app, ci, 'GET', policies)).statusCode, 200)
  t.equal((await send(platform, owner!, 'DELETE', `${tokens}/${created.id}`)).statusCode, 204)
  t.equal((await send(app, ci, 'GET', policies)).statusCode, 401)
  t.equal((await send(platform, owner!, 'DELETE', `${tokens}/${created.id}`)).statusCode, 204, 'revoking twice is still revoked')
  t.equal((await send(platform, stranger!, 'DELETE', `/api/v1/organizations/${otherOrgId}/api-tokens/${created.id}`)).statusCode, 404)

  const expiring = await mint(owner!, { productRoles: { alerting: 'viewer' }, expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
  await db
    .updateTable('core.apiTokens')
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where('id', '=', expiring.id)
    .execute()
  t.equal((await send(app, bearer(expiring.token), 'GET', policies)).statusCode, 401)
})
