import t from 'tap'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, startTestService, type SignedIn } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const ownerA = await service.signIn('owner@a.example')
const adminA = await service.signIn('admin@a.example')
const memberA = await service.signIn('member@a.example')
const ownerB = await service.signIn('owner@b.example')
const memberB = await service.signIn('member@b.example')

async function organization(owner: SignedIn, slug: string, others: Array<[SignedIn, string]>) {
  const { id } = (
    await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: slug, slug } })
  ).json()
  for (const [user, role] of others) {
    await app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${id}/members`,
      headers: owner.headers,
      payload: { email: user.email, role, productRoles: { alerting: 'viewer' } },
    })
    await acceptInvitationOf(app, user)
  }
  const members = await db.selectFrom('core.organizationMembers').select(['id', 'userId']).where('organizationId', '=', id).execute()
  return { id, memberOf: (user: SignedIn) => members.find((member) => member.userId === user.userId)!.id }
}

const a = await organization(ownerA, 'tenant-a', [
  [adminA, 'admin'],
  [memberA, 'member'],
])
const b = await organization(ownerB, 'tenant-b', [[memberB, 'member']])

/** Everything of organization B, to compare before and after. */
async function snapshotOfB() {
  return {
    organization: await db.selectFrom('core.organizations').selectAll().where('id', '=', b.id).executeTakeFirst(),
    members: await db.selectFrom('core.organizationMembers').selectAll().where('organizationId', '=', b.id).orderBy('id').execute(),
    productRoles: await db.selectFrom('core.orgProductRoles').selectAll().where('organizationId', '=', b.id).orderBy('id').execute(),
    auditEntries: (await db.selectFrom('core.auditLogs').select('id').where('organizationId', '=', b.id).execute()).length,
  }
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
interface RouteCase {
  method: Method
  path: (orgId: string, memberId: string) => string
  body?: object
  /** The weakest organization role the route admits. */
  needs: 'member' | 'admin' | 'owner'
}

// Every route of the organizations issue, with a body that would succeed for the right caller.
const routes: RouteCase[] = [
  { method: 'GET', path: (o) => `/api/v1/organizations/${o}`, needs: 'member' },
  { method: 'PATCH', path: (o) => `/api/v1/organizations/${o}`, body: { name: 'Hijacked' }, needs: 'admin' },
  { method: 'DELETE', path: (o) => `/api/v1/organizations/${o}`, body: { confirm: 'tenant-b' }, needs: 'owner' },
  { method: 'GET', path: (o) => `/api/v1/organizations/${o}/members`, needs: 'member' },
  {
    method: 'POST',
    path: (o) => `/api/v1/organizations/${o}/members`,
    body: { email: 'intruder@a.example', role: 'member' },
    needs: 'admin',
  },
  { method: 'PATCH', path: (o, m) => `/api/v1/organizations/${o}/members/${m}`, body: { role: 'admin' }, needs: 'owner' },
  {
    method: 'PUT',
    path: (o, m) => `/api/v1/organizations/${o}/members/${m}`,
    body: { role: 'admin', productRoles: { alerting: 'admin' } },
    needs: 'admin',
  },
  { method: 'DELETE', path: (o, m) => `/api/v1/organizations/${o}/members/${m}`, needs: 'admin' },
  {
    method: 'POST',
    path: (o) => `/api/v1/organizations/${o}/transfer-ownership`,
    body: { memberId: '00000000-0000-4000-8000-000000000001' },
    needs: 'owner',
  },
  { method: 'GET', path: (o) => `/api/v1/organizations/${o}/product-role-options`, needs: 'member' },
  { method: 'GET', path: (o, m) => `/api/v1/organizations/${o}/members/${m}/product-roles`, needs: 'member' },
  {
    method: 'PUT',
    path: (o, m) => `/api/v1/organizations/${o}/members/${m}/product-roles`,
    body: { productRoles: { alerting: 'admin' } },
    needs: 'admin',
  },
  { method: 'GET', path: (o) => `/api/v1/organizations/${o}/subscription`, needs: 'member' },
  { method: 'GET', path: (o) => `/api/v1/organizations/${o}/audit-logs`, needs: 'member' },
]

const label = (route: RouteCase) => `${route.method} ${route.path(':orgId', ':memberId')}`

t.test("a user of organization A gets 404 for organization B's ids, and B is unchanged", async (t) => {
  const before = await snapshotOfB()
  for (const route of routes) {
    for (const caller of [ownerA, adminA, memberA]) {
      const response = await app.inject({
        method: route.method,
        url: route.path(b.id, b.memberOf(memberB)),
        headers: caller.headers,
        ...(route.body ? { payload: route.body } : {}),
      })
      t.equal(response.statusCode, 404, `${label(route)} as ${caller.email}`)
      t.equal(response.json().code, 'NOT_FOUND')
    }
  }
  t.same(await snapshotOfB(), before)
})

t.test("B's member ids are not found through A's organization either", async (t) => {
  const before = await snapshotOfB()
  for (const route of routes.filter((candidate) => candidate.path('o', 'm').includes('/members/m'))) {
    const response = await app.inject({
      method: route.method,
      url: route.path(a.id, b.memberOf(memberB)),
      headers: ownerA.headers,
      ...(route.body ? { payload: route.body } : {}),
    })
    t.equal(response.statusCode, 404, label(route))
  }
  const transfer = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${a.id}/transfer-ownership`,
    headers: ownerA.headers,
    payload: { memberId: b.memberOf(memberB) },
  })
  t.equal(transfer.statusCode, 404)
  t.same(await snapshotOfB(), before)
})

t.test('a member gets 403 on admin routes and an admin gets 403 on owner routes, changing nothing', async (t) => {
  const snapshotOfA = async () => ({
    organization: await db.selectFrom('core.organizations').selectAll().where('id', '=', a.id).executeTakeFirst(),
    members: await db.selectFrom('core.organizationMembers').selectAll().where('organizationId', '=', a.id).orderBy('id').execute(),
    productRoles: await db.selectFrom('core.orgProductRoles').selectAll().where('organizationId', '=', a.id).orderBy('id').execute(),
  })
  const before = await snapshotOfA()
  for (const route of routes) {
    const refused = route.needs === 'admin' ? [memberA] : route.needs === 'owner' ? [memberA, adminA] : []
    for (const caller of refused) {
      const target = route.path('o', 'm').includes('/members/m') ? a.memberOf(ownerA === caller ? adminA : memberA) : ''
      const body = route.method === 'DELETE' && route.needs === 'owner' ? { confirm: 'tenant-a' } : route.body
      const response = await app.inject({
        method: route.method,
        url: route.path(a.id, target),
        headers: caller.headers,
        ...(body ? { payload: body } : {}),
      })
      t.equal(response.statusCode, 403, `${label(route)} as ${caller.email}`)
      t.equal(response.json().code, 'FORBIDDEN')
    }
  }
  t.same(await snapshotOfA(), before)
})
