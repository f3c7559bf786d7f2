import t from 'tap'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, startTestService, type SignedIn } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const owner = await service.signIn('owner@acme.example')
const admin = await service.signIn('admin@acme.example')
const member = await service.signIn('member@acme.example')

async function create(headers: Record<string, string>, payload: object) {
  return app.inject({ method: 'POST', url: '/api/v1/organizations', headers, payload })
}
/** Invites a signed-in person, who accepts. */
async function addMember(orgId: string, person: SignedIn, role: string) {
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/members`,
    headers: owner.headers,
    payload: { email: person.email, role },
  })
  if (response.statusCode !== 201) throw new Error(response.body)
  await acceptInvitationOf(app, person)
}

t.test('creating an organization makes the creator its owner and is audited', async (t) => {
  const response = await create(owner.headers, { name: 'Acme Corp.' })
  t.equal(response.statusCode, 201)
  const body = response.json()
  t.match(body, { name: 'Acme Corp.', slug: 'acme-corp', role: 'owner' })
  const members = await db.selectFrom('core.organizationMembers').select(['userId', 'role']).where('organizationId', '=', body.id).execute()
  t.same(members, [{ userId: owner.userId, role: 'owner' }])
  const entries = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'actorUserId', 'changes'])
    .where('organizationId', '=', body.id)
    .orderBy('action')
    .execute()
  t.same(
    entries.map((entry) => entry.action),
    ['member.added', 'organization.created'],
  )
  t.same(entries[1]?.changes, { after: { name: 'Acme Corp.', slug: 'acme-corp' } })
  t.equal(entries[0]?.actorUserId, owner.userId)
})

t.test('a generated slug that is taken gets a suffix; a requested one is a 409 and creates nothing', async (t) => {
  const second = await create(owner.headers, { name: 'Acme Corp' })
  t.match(second.json().slug, /^acme-corp-[0-9a-f]{6}$/)
  const before = await db.selectFrom('core.organizations').select('id').execute()
  const taken = await create(owner.headers, { name: 'Copycat', slug: 'acme-corp' })
  t.equal(taken.statusCode, 409)
  t.equal(taken.json().code, 'CONFLICT')
  t.equal((await db.selectFrom('core.organizations').select('id').execute()).length, before.length)
  const bad = await create(owner.headers, { name: 'Bad', slug: 'Not A Slug' })
  t.equal(bad.statusCode, 400)
  const extra = await create(owner.headers, { name: 'Extra', plan: 'enterprise' })
  t.equal(extra.statusCode, 400)
  t.equal((await db.selectFrom('core.organizations').select('id').execute()).length, before.length)
})

t.test('the list holds the caller’s organizations with their role, paginated', async (t) => {
  const { id } = (await create(owner.headers, { name: 'Listed', slug: 'listed' })).json()
  await addMember(id, member, 'member')
  const list = await app.inject({ method: 'GET', url: '/api/v1/organizations?limit=1', headers: member.headers })
  t.equal(list.statusCode, 200)
  t.same(list.json().meta, { page: 1, limit: 1, total: 1 })
  t.match(list.json().data, [{ id, slug: 'listed', role: 'member' }])
  const all = await app.inject({ method: 'GET', url: '/api/v1/organizations?limit=100', headers: owner.headers })
  t.ok(all.json().meta.total >= 3)
  t.ok(all.json().data.every((org: { role: string }) => org.role === 'owner'))
  const tooMany = await app.inject({ method: 'GET', url: '/api/v1/organizations?limit=101', headers: owner.headers })
  t.equal(tooMany.statusCode, 400)
})

t.test('get and update follow the organization roles', async (t) => {
  const { id } = (await create(owner.headers, { name: 'Roles', slug: 'roles' })).json()
  await addMember(id, admin, 'admin')
  await addMember(id, member, 'member')
  const got = await app.inject({ method: 'GET', url: `/api/v1/organizations/${id}`, headers: member.headers })
  t.match(got.json(), { id, name: 'Roles', role: 'member' })

  const byMember = await app.inject({
    method: 'PATCH',
    url: `/api/v1/organizations/${id}`,
    headers: member.headers,
    payload: { name: 'Nope' },
  })
  t.equal(byMember.statusCode, 403)
  const byAdmin = await app.inject({
    method: 'PATCH',
    url: `/api/v1/organizations/${id}`,
    headers: admin.headers,
    payload: { name: 'Renamed', slug: 'renamed' },
  })
  t.equal(byAdmin.statusCode, 200)
  t.match(byAdmin.json(), { name: 'Renamed', slug: 'renamed', role: 'admin' })
  const entry = await db
    .selectFrom('core.auditLogs')
    .select('changes')
    .where('organizationId', '=', id)
    .where('action', '=', 'organization.updated')
    .executeTakeFirstOrThrow()
  t.same(entry.changes, { before: { name: 'Roles', slug: 'roles' }, after: { name: 'Renamed', slug: 'renamed' } })

  const notEditable = await app.inject({
    method: 'PATCH',
    url: `/api/v1/organizations/${id}`,
    headers: admin.headers,
    payload: { id: 'x' },
  })
  t.equal(notEditable.statusCode, 400)
  const slugTaken = await app.inject({
    method: 'PATCH',
    url: `/api/v1/organizations/${id}`,
    headers: admin.headers,
    payload: { slug: 'acme-corp' },
  })
  t.equal(slugTaken.statusCode, 409)
  t.match(await db.selectFrom('core.organizations').select(['name', 'slug']).where('id', '=', id).executeTakeFirstOrThrow(), {
    name: 'Renamed',
    slug: 'renamed',
  })
})

t.test('only an owner deletes, after confirming with the slug; the audit log stays', async (t) => {
  const { id } = (await create(owner.headers, { name: 'Doomed', slug: 'doomed' })).json()
  await addMember(id, admin, 'admin')
  await db
    .insertInto('core.orgProductSubscriptions')
    .values({ organizationId: id, product: 'alerting', plan: 'team', status: 'active' })
    .execute()
  const url = `/api/v1/organizations/${id}`

  t.equal((await app.inject({ method: 'DELETE', url, headers: admin.headers, payload: { confirm: 'doomed' } })).statusCode, 403)
  const wrong = await app.inject({ method: 'DELETE', url, headers: owner.headers, payload: { confirm: 'something-else' } })
  t.equal(wrong.statusCode, 400)
  t.match(wrong.json(), { code: 'VALIDATION_FAILED', details: [{ field: 'confirm' }] })
  t.equal((await app.inject({ method: 'DELETE', url, headers: owner.headers })).statusCode, 400, 'the confirmation is required')
  t.ok(await db.selectFrom('core.organizations').select('id').where('id', '=', id).executeTakeFirst(), 'still there')

  const deleted = await app.inject({ method: 'DELETE', url, headers: owner.headers, payload: { confirm: 'doomed' } })
  t.equal(deleted.statusCode, 204)
  t.notOk(await db.selectFrom('core.organizations').select('id').where('id', '=', id).executeTakeFirst())
  t.same(await db.selectFrom('core.organizationMembers').select('id').where('organizationId', '=', id).execute(), [])
  t.same(await db.selectFrom('core.orgProductSubscriptions').select('id').where('organizationId', '=', id).execute(), [])
  const history = await db.selectFrom('core.auditLogs').select('action').where('organizationId', '=', id).execute()
  t.ok(
    history.some((entry) => entry.action === 'organization.deleted'),
    'the deletion itself is recorded',
  )
  t.equal((await app.inject({ method: 'GET', url, headers: owner.headers })).statusCode, 404)
})

t.test('the organization subscription shows each product’s plan and status', async (t) => {
  const { id } = (await create(owner.headers, { name: 'Billing', slug: 'billing' })).json()
  const url = `/api/v1/organizations/${id}/subscription`
  const none = (await app.inject({ method: 'GET', url, headers: owner.headers })).json()
  t.same(
    none.products.map((entry: { status: string; source: null }) => [entry.status, entry.source]),
    [
      ['none', null],
      ['none', null],
      ['none', null],
    ],
  )

  await db.insertInto('core.subscriptions').values({ organizationId: id, plan: 'legacy-pro', status: 'active' }).execute()
  const legacy = (await app.inject({ method: 'GET', url, headers: owner.headers })).json()
  t.match(legacy.products[0], { product: 'statuspages', plan: 'legacy-pro', status: 'active', source: 'legacy' })

  await db
    .insertInto('core.orgProductSubscriptions')
    .values([
      { organizationId: id, product: 'bundle', plan: 'team', status: 'active' },
      { organizationId: id, product: 'alerting', plan: 'business', status: 'past_due' },
    ])
    .execute()
  const current = (await app.inject({ method: 'GET', url, headers: owner.headers })).json()
  t.same(
    current.products.map((entry: { product: string; plan: string; status: string; source: string }) => [
      entry.product,
      entry.plan,
      entry.status,
      entry.source,
    ]),
    [
      ['statuspages', 'team', 'active', 'bundle'],
      ['alerting', 'business', 'past_due', 'product'],
      ['synthetics', 'team', 'active', 'bundle'],
    ],
  )
})

t.test('every organization, member, role, subscription and audit route is in the OpenAPI document', async (t) => {
  const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json()
  const expected: Array<[string, string]> = [
    ['/api/v1/organizations', 'get'],
    ['/api/v1/organizations', 'post'],
    ['/api/v1/organizations/{orgId}', 'get'],
    ['/api/v1/organizations/{orgId}', 'patch'],
    ['/api/v1/organizations/{orgId}', 'delete'],
    ['/api/v1/organizations/{orgId}/members', 'get'],
    ['/api/v1/organizations/{orgId}/members', 'post'],
    ['/api/v1/organizations/{orgId}/members/{memberId}', 'patch'],
    ['/api/v1/organizations/{orgId}/members/{memberId}', 'put'],
    ['/api/v1/organizations/{orgId}/members/{memberId}', 'delete'],
    ['/api/v1/organizations/{orgId}/transfer-ownership', 'post'],
    ['/api/v1/organizations/{orgId}/product-role-options', 'get'],
    ['/api/v1/organizations/{orgId}/members/{memberId}/product-roles', 'get'],
    ['/api/v1/organizations/{orgId}/members/{memberId}/product-roles', 'put'],
    ['/api/v1/organizations/{orgId}/subscription', 'get'],
    ['/api/v1/organizations/{orgId}/audit-logs', 'get'],
    ['/api/v1/organizations/{orgId}/invitations', 'get'],
    ['/api/v1/organizations/{orgId}/invitations', 'post'],
    ['/api/v1/organizations/{orgId}/invitations/{invitationId}', 'get'],
    ['/api/v1/organizations/{orgId}/invitations/{invitationId}', 'delete'],
    ['/api/v1/organizations/{orgId}/invitations/{invitationId}/resend', 'post'],
    ['/api/v1/invitations/accept', 'post'],
    ['/api/v1/admin/users/{userId}/platform-role', 'put'],
  ]
  for (const [path, method] of expected) {
    const operation = document.paths[path]?.[method]
    t.ok(operation, `${method.toUpperCase()} ${path}`)
    t.ok(
      operation?.responses?.['200'] ?? operation?.responses?.['201'] ?? operation?.responses?.['204'],
      `${method.toUpperCase()} ${path} documents its answer`,
    )
  }
})

t.test('one person creates at most ORGANIZATIONS_PER_USER organizations; a platform admin is not held to it', async (t) => {
  const limited = await startTestService(t, buildApp, { config: { organizationsPerUser: 2 } })
  const maker = await limited.signIn('maker@limits.example')
  const make = (who: { headers: Record<string, string> }, slug: string) =>
    limited.app.inject({ method: 'POST', url: '/api/v1/organizations', headers: who.headers, payload: { name: slug, slug } })
  t.equal((await make(maker, 'maker-one')).statusCode, 201)
  const second = await make(maker, 'maker-two')
  t.equal(second.statusCode, 201)
  const third = await make(maker, 'maker-three')
  t.equal(third.statusCode, 403)
  t.match(third.json(), { code: 'FORBIDDEN', message: /you have created 2 organizations, the most one person may/ })
  t.equal(
    await limited.app.database.db.selectFrom('core.organizations').select('id').where('slug', '=', 'maker-three').executeTakeFirst(),
    undefined,
    'nothing was created',
  )
  // Deleting one frees its place.
  const removed = await limited.app.inject({
    method: 'DELETE',
    url: `/api/v1/organizations/${second.json().id}`,
    headers: maker.headers,
    payload: { confirm: 'maker-two' },
  })
  t.equal(removed.statusCode, 204, removed.body)
  t.equal((await make(maker, 'maker-three')).statusCode, 201)

  const platformAdmin = await limited.signIn('root@limits.example', ['PlatformAdmins'])
  for (const slug of ['root-one', 'root-two', 'root-three']) t.equal((await make(platformAdmin, slug)).statusCode, 201, slug)
})
