import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { sql, type Kysely, type Transaction } from 'kysely'
import pg from 'pg'
import type { DB } from '@svc/db'
import type { ServiceConfig } from '@svc/config'
import { buildServiceApp, type Resources } from '@svc/runtime'
import { buildApp as buildPlatform } from '@svc/platform'
import { acceptInvitationOf, startTestService, until } from '@svc/testkit'

// A surface whose routes declare each access rule, so the rules are tested as routes use them.
async function ruleSurface(app: FastifyInstance): Promise<void> {
  const ok = async () => ({ ok: true })
  app.get('/api/v1/organizations/:orgId/anything', ok)
  app.get('/api/v1/organizations/:orgId/settings', { preHandler: app.requireOrgRole('admin', 'owner') }, ok)
  app.get('/api/v1/organizations/:orgId/danger', { preHandler: app.requireOrgRole('owner') }, ok)
  app.get('/api/v1/organizations/:orgId/alerting-config', { preHandler: app.requireProductRole('alerting', 'manager') }, ok)
  app.get('/api/v1/organizations/:orgId/alerting-view', { preHandler: app.requireProductRole('alerting', 'viewer') }, ok)
  app.get('/api/v1/organizations/:orgId/team', { preHandler: app.requireOrgRoleOrAnyProductRole(['admin', 'owner'], 'admin') }, ok)
  app.get('/api/v1/admin-only', { preHandler: app.requirePlatformAdmin }, ok)
  app.get('/api/v1/organizations/:orgId/membership', async (request) => request.membership)
}

const buildRuleApp = (config: ServiceConfig, shared?: Resources) =>
  buildServiceApp(config, { name: 'product', title: 'rules', description: 'access rules', surfaces: ruleSurface }, shared)

const service = await startTestService(t, buildRuleApp)
const { app } = service
const db = app.database.db

async function signIn(email: string, groups: string[] = []) {
  const token = service.token(email, groups)
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } })
  return { token, userId: me.json().userId as string }
}

const [owner, admin, manager, viewer, outsider, globalAdmin] = await Promise.all(
  ['owner', 'admin', 'manager', 'viewer', 'outsider', 'global'].map((name) => signIn(`${name}@example.com`)),
)
await db.updateTable('core.users').set({ platformRole: 'GLOBAL_ADMIN' }).where('id', '=', globalAdmin!.userId).execute()
app.sessions.forget(globalAdmin!.userId)
const org = await db.insertInto('core.organizations').values({ name: 'Acme', slug: 'acme' }).returning('id').executeTakeFirstOrThrow()
const other = await db.insertInto('core.organizations').values({ name: 'Other', slug: 'other' }).returning('id').executeTakeFirstOrThrow()
const members = await db
  .insertInto('core.organizationMembers')
  .values([
    { organizationId: org.id, userId: owner!.userId, role: 'owner' },
    { organizationId: org.id, userId: admin!.userId, role: 'admin' },
    { organizationId: org.id, userId: manager!.userId, role: 'member' },
    { organizationId: org.id, userId: viewer!.userId, role: 'member' },
    { organizationId: org.id, userId: globalAdmin!.userId, role: 'member' },
    { organizationId: other.id, userId: outsider!.userId, role: 'owner' },
  ])
  .returning(['id', 'userId'])
  .execute()
const memberOf = (userId: string) => members.find((member) => member.userId === userId)!.id
await db
  .insertInto('core.orgProductRoles')
  .values([
    { organizationId: org.id, memberId: memberOf(manager!.userId), product: 'alerting', role: 'manager' },
    { organizationId: org.id, memberId: memberOf(viewer!.userId), product: 'alerting', role: 'viewer' },
    { organizationId: org.id, memberId: memberOf(viewer!.userId), product: 'synthetics', role: 'admin' },
  ])
  .execute()

async function status(who: { token: string }, path: string) {
  const response = await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${who.token}` } })
  return response.statusCode
}
const orgPath = (suffix: string, id = org.id) => `/api/v1/organizations/${id}/${suffix}`

t.test('every /organizations/:orgId route needs membership, even with no rule declared', async (t) => {
  t.equal(await status(viewer!, orgPath('anything')), 200)
  t.equal(await status(outsider!, orgPath('anything')), 404, "another organization's id is not found")
  t.equal(await status(viewer!, orgPath('anything', other.id)), 404)
  t.equal(await status(viewer!, orgPath('anything', '00000000-0000-4000-8000-000000000000')), 404)
  t.equal(await status(viewer!, orgPath('anything', 'acme')), 404, 'a malformed id is 404, not 500')
})

t.test('the member rule attaches the organization and membership to the request', async (t) => {
  const response = await app.inject({ method: 'GET', url: orgPath('membership'), headers: { authorization: `Bearer ${admin!.token}` } })
  t.same(response.json(), {
    organizationId: org.id,
    organizationName: 'Acme',
    organizationSlug: 'acme',
    memberId: memberOf(admin!.userId),
    role: 'admin',
  })
})

t.test('organization roles', async (t) => {
  t.equal(await status(viewer!, orgPath('settings')), 403)
  t.equal(await status(admin!, orgPath('settings')), 200)
  t.equal(await status(owner!, orgPath('settings')), 200)
  t.equal(await status(admin!, orgPath('danger')), 403, 'an admin is refused on owner routes')
  t.equal(await status(owner!, orgPath('danger')), 200)
  t.equal(await status(outsider!, orgPath('settings')), 404, 'non-members get 404 before any role check')
})

t.test('product roles follow the hierarchy, per product', async (t) => {
  t.equal(await status(viewer!, orgPath('alerting-config')), 403, 'viewer is below manager')
  t.equal(await status(viewer!, orgPath('alerting-view')), 200)
  t.equal(await status(manager!, orgPath('alerting-config')), 200)
  t.equal(await status(manager!, orgPath('alerting-view')), 200, 'manager includes viewer')
  t.equal(await status(admin!, orgPath('alerting-view')), 403, 'the organization admin role is not a product role')
  t.equal(await status(globalAdmin!, orgPath('alerting-config')), 200, 'GLOBAL_ADMIN bypasses')
  t.equal(await status(owner!, orgPath('alerting-config')), 200, 'the organization owner bypasses')
  const forbidden = await app.inject({
    method: 'GET',
    url: orgPath('alerting-config'),
    headers: { authorization: `Bearer ${viewer!.token}` },
  })
  t.same(forbidden.json(), {
    statusCode: 403,
    error: 'Forbidden',
    message: 'this needs the alerting role manager or higher',
    code: 'FORBIDDEN',
  })
})

t.test('an organization role, or a product role in any one product', async (t) => {
  t.equal(await status(admin!, orgPath('team')), 200)
  t.equal(await status(owner!, orgPath('team')), 200)
  t.equal(await status(viewer!, orgPath('team')), 200, 'admin of synthetics, viewer of alerting')
  t.equal(await status(manager!, orgPath('team')), 403, 'manager is below admin')
  t.equal(await status(globalAdmin!, orgPath('team')), 200, 'GLOBAL_ADMIN bypasses')
  t.equal(await status(outsider!, orgPath('team')), 404)
  const forbidden = await app.inject({ method: 'GET', url: orgPath('team'), headers: { authorization: `Bearer ${manager!.token}` } })
  t.equal(forbidden.json().message, 'this needs the organization role admin or owner, or the role admin in a product')

  const group = await db
    .insertInto('core.scimGroups')
    .values({ organizationId: org.id, displayName: 'Alerting admins', productRoles: { alerting: 'admin' } })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('core.scimGroupMembers')
    .values({ organizationId: org.id, groupId: group.id, memberId: memberOf(manager!.userId) })
    .execute()
  t.equal(await status(manager!, orgPath('team')), 200, 'a SCIM group grants the product role too')
  await db.deleteFrom('core.scimGroups').where('id', '=', group.id).execute()
  t.equal(await status(manager!, orgPath('team')), 403)
})

t.test('the ADMIN platform role bypasses product roles too', async (t) => {
  await db.updateTable('core.users').set({ platformRole: 'ADMIN' }).where('id', '=', viewer!.userId).execute()
  app.sessions.forget(viewer!.userId)
  t.equal(await status(viewer!, orgPath('alerting-config')), 200)
  await db.updateTable('core.users').set({ platformRole: null }).where('id', '=', viewer!.userId).execute()
  app.sessions.forget(viewer!.userId)
  t.equal(await status(viewer!, orgPath('alerting-config')), 403)
})

t.test('the platform admin rule follows the PlatformAdmins group', async (t) => {
  t.equal(await status(owner!, '/api/v1/admin-only'), 403)
  t.equal(await status(globalAdmin!, '/api/v1/admin-only'), 403, 'a platform role is not the group')
  t.equal(await status(await signIn('root@example.com', ['PlatformAdmins']), '/api/v1/admin-only'), 200)
})

t.test('product roles granted through the platform API decide on the product API', async (t) => {
  const platform = await buildPlatform(service.config, service.resources)
  t.teardown(() => platform.close())
  const grantee = await signIn('grantee@example.com')
  const added = await platform.inject({
    method: 'POST',
    url: `/api/v1/organizations/${org.id}/members`,
    headers: { authorization: `Bearer ${owner!.token}` },
    payload: { email: 'grantee@example.com', role: 'member' },
  })
  const memberId = added.json().id as string
  await acceptInvitationOf(platform, { ...grantee, email: 'grantee@example.com', headers: { authorization: `Bearer ${grantee.token}` } })
  const grant = (productRoles: object) =>
    platform.inject({
      method: 'PUT',
      url: `/api/v1/organizations/${org.id}/members/${memberId}/product-roles`,
      headers: { authorization: `Bearer ${owner!.token}` },
      payload: { productRoles },
    })

  t.equal(await status(grantee, orgPath('alerting-view')), 403, 'no role yet')
  await grant({ alerting: 'viewer' })
  t.equal(await status(grantee, orgPath('alerting-view')), 200)
  t.equal(await status(grantee, orgPath('alerting-config')), 403, 'a viewer is refused where manager is needed')
  await grant({ alerting: 'manager' })
  t.equal(await status(grantee, orgPath('alerting-config')), 200, 'manager passes')
  await grant({ synthetics: 'admin' })
  t.equal(await status(grantee, orgPath('alerting-view')), 403, 'a role on another product gives nothing here')

  const support = await signIn('support@example.com', ['PlatformAdmins'])
  await platform.inject({
    method: 'PUT',
    url: `/api/v1/admin/users/${grantee.userId}/platform-role`,
    headers: { authorization: `Bearer ${support.token}` },
    payload: { platformRole: 'GLOBAL_ADMIN' },
  })
  t.equal(await status(grantee, orgPath('alerting-config')), 200, 'a platform role set by a platform admin bypasses')
  const refused = await platform.inject({
    method: 'PUT',
    url: `/api/v1/admin/users/${grantee.userId}/platform-role`,
    headers: { authorization: `Bearer ${owner!.token}` },
    payload: { platformRole: null },
  })
  t.equal(refused.statusCode, 403, 'only platform admins set platform roles')
})

// A change no trigger announces (replication's role turns them off): the only way to see what the rules kept.
const unannounced = (change: (trx: Transaction<DB>) => Promise<unknown>) =>
  db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    await change(trx)
  })

t.test("what the rules read is kept until the organization's memberships, roles or groups change", async (t) => {
  const path = orgPath('alerting-view')
  const viewerRole = (executor: Kysely<DB>) =>
    executor.deleteFrom('core.orgProductRoles').where('memberId', '=', memberOf(viewer!.userId)).where('product', '=', 'alerting').execute()
  t.equal(await status(viewer!, path), 200)
  await unannounced(viewerRole)
  t.equal(await status(viewer!, path), 200, 'kept: the rule read nothing')
  await db.updateTable('core.organizations').set({ name: 'Acme' }).where('id', '=', org.id).execute()
  t.equal(await status(viewer!, path), 403, 'any announced change to the organization: read again')
  await db
    .insertInto('core.orgProductRoles')
    .values({ organizationId: org.id, memberId: memberOf(viewer!.userId), product: 'alerting', role: 'viewer' })
    .execute()
  t.equal(await status(viewer!, path), 200, 'a role granted is honoured at once')
})

t.test('a member suspended or removed is refused at once', async (t) => {
  const someone = await signIn('someone@example.com')
  const { id } = await db
    .insertInto('core.organizationMembers')
    .values({ organizationId: org.id, userId: someone.userId, role: 'member' })
    .returning('id')
    .executeTakeFirstOrThrow()
  t.equal(await status(someone, orgPath('anything')), 200)
  await db.updateTable('core.organizationMembers').set({ suspendedAt: new Date() }).where('id', '=', id).execute()
  t.equal(await status(someone, orgPath('anything')), 404, 'suspended (SCIM active=false)')
  await db.updateTable('core.organizationMembers').set({ suspendedAt: null }).where('id', '=', id).execute()
  t.equal(await status(someone, orgPath('anything')), 200, 'reactivated')
  await db.deleteFrom('core.organizationMembers').where('id', '=', id).execute()
  t.equal(await status(someone, orgPath('anything')), 404, 'removed')
  t.equal(await status(viewer!, orgPath('anything')), 200, 'the other members keep their access')
})

t.test(
  "another replica's change is honoured once its notice arrives",
  { skip: !service.config.databaseUrl && 'PostgreSQL only: the embedded database is one process' },
  async (t) => {
    const someone = await signIn('elsewhere@example.com')
    await db.insertInto('core.organizationMembers').values({ organizationId: org.id, userId: someone.userId, role: 'member' }).execute()
    t.equal(await status(someone, orgPath('anything')), 200)
    const replica = new pg.Client({ connectionString: service.config.databaseUrl })
    await replica.connect()
    t.teardown(() => replica.end())
    await replica.query('delete from core.organization_members where user_id = $1', [someone.userId])
    await until('the removal to be honoured', async () => (await status(someone, orgPath('anything'))) === 404)
  },
)
