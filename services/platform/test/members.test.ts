import { sql } from 'kysely'
import t from 'tap'
import { subscribe } from '@svc/events'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, startTestService, type SignedIn } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const owner = await service.signIn('owner@members.example')
const admin = await service.signIn('admin@members.example')
const plain = await service.signIn('plain@members.example')
const { id: orgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'Members', slug: 'members' } })
).json()
const base = `/api/v1/organizations/${orgId}`

async function call(who: SignedIn, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, payload?: object) {
  return app.inject({ method, url: `${base}${path}`, headers: who.headers, ...(payload ? { payload } : {}) })
}
async function memberIdOf(userId: string): Promise<string> {
  const row = await db
    .selectFrom('core.organizationMembers')
    .select('id')
    .where('organizationId', '=', orgId)
    .where('userId', '=', userId)
    .executeTakeFirstOrThrow()
  return row.id
}
async function roleOf(memberId: string) {
  return (await db.selectFrom('core.organizationMembers').select('role').where('id', '=', memberId).executeTakeFirst())?.role
}

t.test('adding members: existing users, pending users, and no duplicates', async (t) => {
  const added = await call(owner, 'POST', '/members', { email: admin.email, role: 'admin' })
  t.equal(added.statusCode, 201)
  // An invitation names no account, and does not say whether the address has signed in before.
  t.match(added.json(), {
    userId: null,
    email: admin.email,
    role: 'admin',
    productRoles: {},
    pending: true,
    invited: true,
    invitation: { email: admin.email, role: 'admin', status: 'pending', delivery: { status: 'held' } },
  })
  t.equal((await call(admin, 'GET', '/members')).statusCode, 404, 'an invitation grants nothing until accepted')
  await acceptInvitationOf(app, admin)
  t.equal((await call(admin, 'GET', '/members')).statusCode, 200, 'the accepted invitation makes a member')
  t.equal(
    (await call(owner, 'POST', '/members', { email: plain.email.toUpperCase(), role: 'member', productRoles: { alerting: 'viewer' } }))
      .statusCode,
    201,
  )
  await acceptInvitationOf(app, plain)
  t.match(
    (await call(owner, 'GET', '/members?search=plain')).json().data,
    [{ userId: plain.userId, invited: false }],
    'e-mail matches in any letter case',
  )

  const invited = await call(admin, 'POST', '/members', {
    email: 'Newcomer@Members.example',
    role: 'member',
    productRoles: { alerting: 'responder' },
  })
  t.equal(invited.statusCode, 201)
  t.match(invited.json(), { email: 'Newcomer@Members.example', pending: true, invited: true, productRoles: { alerting: 'responder' } })
  // The first sign-in with that address links the pending user; accepting makes them a member.
  const newcomer = await service.signIn('newcomer@members.example')
  t.match((await call(owner, 'GET', `/members?search=newcomer`)).json().data, [{ userId: null, pending: true, invited: true }])
  await acceptInvitationOf(app, newcomer)
  const listed = await call(owner, 'GET', `/members?search=newcomer`)
  t.match(listed.json().data, [{ userId: newcomer.userId, pending: false, invited: false }])

  const again = await call(owner, 'POST', '/members', { email: admin.email, role: 'member' })
  t.equal(again.statusCode, 409)
  t.equal(await roleOf(await memberIdOf(admin.userId)), 'admin', 'unchanged')
  t.equal(
    (await call(admin, 'POST', '/members', { email: 'boss@members.example', role: 'owner' })).statusCode,
    403,
    'an admin cannot grant owner',
  )
  t.equal((await call(plain, 'POST', '/members', { email: 'x@members.example', role: 'member' })).statusCode, 403, 'a member cannot add')
  t.notOk(
    await db.selectFrom('core.users').select('id').where('email', 'in', ['boss@members.example', 'x@members.example']).executeTakeFirst(),
    'nothing was created',
  )
  t.equal((await call(owner, 'POST', '/members', { email: 'not-an-email', role: 'member' })).statusCode, 400)
  t.equal((await call(owner, 'POST', '/members', { email: 'y@members.example', role: 'superuser' })).statusCode, 400)
  t.equal(
    (await call(owner, 'POST', '/members', { email: 'z@members.example', role: 'member', productRoles: { billing: 'admin' } })).statusCode,
    400,
  )
})

t.test('listing filters by role and searches by e-mail', async (t) => {
  const all = (await call(plain, 'GET', '/members')).json()
  t.equal(all.meta.total, 4)
  t.same(Object.keys(all.data[0]).sort(), [
    'createdAt',
    'email',
    'id',
    'invited',
    'pending',
    'productRoles',
    'role',
    'suspended',
    'updatedAt',
    'userId',
  ])
  t.same(
    (await call(plain, 'GET', '/members?role=admin')).json().data.map((m: { email: string }) => m.email),
    [admin.email],
  )
  t.same(
    (await call(plain, 'GET', '/members?search=OWNER@')).json().data.map((m: { email: string }) => m.email),
    [owner.email],
  )
  t.same((await call(plain, 'GET', '/members?search=%25')).json().data, [], 'LIKE wildcards are matched literally')
  const page = (await call(plain, 'GET', '/members?limit=2&page=2')).json()
  t.same(page.meta, { page: 2, limit: 2, total: 4 })
  t.equal(page.data.length, 2)
})

t.test('PATCH (owner only) changes the organization role', async (t) => {
  const plainMember = await memberIdOf(plain.userId)
  t.equal((await call(admin, 'PATCH', `/members/${plainMember}`, { role: 'admin' })).statusCode, 403, 'an admin gets 403 on owner routes')
  const promoted = await call(owner, 'PATCH', `/members/${plainMember}`, { role: 'admin' })
  t.equal(promoted.statusCode, 200)
  t.equal(promoted.json().role, 'admin')
  t.equal((await call(owner, 'PATCH', `/members/${plainMember}`, { role: 'member' })).json().role, 'member')
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('changes')
    .where('entityId', '=', plainMember)
    .where('action', '=', 'member.role_changed')
    .orderBy('createdAt')
    .execute()
  t.same(
    audit.map((entry) => entry.changes),
    [
      { before: { role: 'member' }, after: { role: 'admin' } },
      { before: { role: 'admin' }, after: { role: 'member' } },
    ],
  )
  t.equal((await call(owner, 'PATCH', `/members/00000000-0000-4000-8000-000000000000`, { role: 'admin' })).statusCode, 404)
  t.equal((await call(owner, 'PATCH', `/members/not-a-uuid`, { role: 'admin' })).statusCode, 404)
})

t.test('the last owner can be neither demoted nor removed', async (t) => {
  const ownerMember = await memberIdOf(owner.userId)
  const demote = await call(owner, 'PATCH', `/members/${ownerMember}`, { role: 'admin' })
  t.equal(demote.statusCode, 409)
  t.match(demote.json().message, /last owner/)
  const leave = await call(owner, 'DELETE', `/members/${ownerMember}`)
  t.equal(leave.statusCode, 409)
  t.equal(await roleOf(ownerMember), 'owner')
})

t.test('admins manage members and admins, never owners, and never raise anyone above admin', async (t) => {
  const ownerMember = await memberIdOf(owner.userId)
  const adminMember = await memberIdOf(admin.userId)
  const plainMember = await memberIdOf(plain.userId)
  t.equal((await call(admin, 'PUT', `/members/${ownerMember}`, { role: 'admin', productRoles: {} })).statusCode, 403)
  t.equal((await call(admin, 'PUT', `/members/${adminMember}`, { role: 'owner', productRoles: {} })).statusCode, 403, 'not even themselves')
  t.equal((await call(admin, 'PUT', `/members/${ownerMember}/product-roles`, { productRoles: { alerting: 'viewer' } })).statusCode, 403)
  t.equal((await call(admin, 'DELETE', `/members/${ownerMember}`)).statusCode, 403)
  t.equal(await roleOf(ownerMember), 'owner')
  t.equal(await roleOf(adminMember), 'admin')

  const put = await call(admin, 'PUT', `/members/${plainMember}`, {
    role: 'admin',
    productRoles: { alerting: 'manager', insights: 'viewer' },
  })
  t.equal(put.statusCode, 200)
  t.match(put.json(), { role: 'admin', productRoles: { alerting: 'manager', insights: 'viewer' } })
  const back = await call(admin, 'PUT', `/members/${plainMember}`, { role: 'member', productRoles: { alerting: 'viewer' } })
  t.same(back.json().productRoles, { alerting: 'viewer' }, 'the set is replaced whole')
  t.equal(
    (await call(plain, 'PUT', `/members/${adminMember}`, { role: 'member', productRoles: {} })).statusCode,
    403,
    'a member gets 403 on admin routes',
  )
})

t.test('product roles: options, read, replace', async (t) => {
  const options = await call(plain, 'GET', '/product-role-options')
  t.same(options.json(), {
    products: ['statuspages', 'alerting', 'synthetics', 'insights'],
    roles: ['viewer', 'responder', 'manager', 'admin'],
  })
  const plainMember = await memberIdOf(plain.userId)
  const set = await call(owner, 'PUT', `/members/${plainMember}/product-roles`, {
    productRoles: { synthetics: 'admin', statuspages: 'responder' },
  })
  t.equal(set.statusCode, 200)
  t.same(set.json(), { productRoles: { synthetics: 'admin', statuspages: 'responder' } })
  t.same((await call(plain, 'GET', `/members/${plainMember}/product-roles`)).json(), {
    productRoles: { synthetics: 'admin', statuspages: 'responder' },
  })
  const rows = await db
    .selectFrom('core.orgProductRoles')
    .select(['product', 'role'])
    .where('memberId', '=', plainMember)
    .orderBy('product')
    .execute()
  t.same(rows, [
    { product: 'statuspages', role: 'responder' },
    { product: 'synthetics', role: 'admin' },
  ])
  t.equal((await call(owner, 'PUT', `/members/${plainMember}/product-roles`, { productRoles: { alerting: 'god' } })).statusCode, 400)
  t.equal((await call(plain, 'PUT', `/members/${plainMember}/product-roles`, { productRoles: {} })).statusCode, 403)
  t.equal((await db.selectFrom('core.orgProductRoles').select('id').where('memberId', '=', plainMember).execute()).length, 2, 'unchanged')
  const cleared = await call(owner, 'PUT', `/members/${plainMember}/product-roles`, { productRoles: {} })
  t.same(cleared.json(), { productRoles: {} })
})

t.test('removing a member takes their product roles with them and announces member.removed', async (t) => {
  // The product API's alerting surface subscribes its own queue; a stand-in queue here.
  await subscribe(app.jobs, 'member.removed', 'test.member-removed')
  const newcomer = (await call(owner, 'GET', '/members?search=newcomer')).json().data[0]
  const newcomerMember = newcomer.id
  t.equal((await call(plain, 'DELETE', `/members/${newcomerMember}`)).statusCode, 403)
  t.equal((await call(admin, 'DELETE', `/members/${newcomerMember}`)).statusCode, 204)
  const announced = await sql<{ data: object }>`select data from pgboss.job where name = 'test.member-removed'`.execute(db)
  t.same(
    announced.rows.map((row) => row.data),
    [{ organizationId: orgId, userId: newcomer.userId }],
    'in the removal’s transaction, once',
  )
  t.notOk(await roleOf(newcomerMember))
  t.same(await db.selectFrom('core.orgProductRoles').select('id').where('memberId', '=', newcomerMember).execute(), [])
  t.equal((await call(admin, 'DELETE', `/members/${newcomerMember}`)).statusCode, 404)
})

t.test('transfer of ownership makes the target owner and the caller admin, at once', async (t) => {
  const ownerMember = await memberIdOf(owner.userId)
  const adminMember = await memberIdOf(admin.userId)
  t.equal((await call(admin, 'POST', '/transfer-ownership', { memberId: adminMember })).statusCode, 403)
  t.equal((await call(owner, 'POST', '/transfer-ownership', { memberId: ownerMember })).statusCode, 400, 'not to oneself')
  t.equal((await call(owner, 'POST', '/transfer-ownership', { memberId: '00000000-0000-4000-8000-000000000000' })).statusCode, 404)
  const pending = (await call(owner, 'POST', '/members', { email: 'not-yet@members.example', role: 'admin' })).json().id
  const toPending = await call(owner, 'POST', '/transfer-ownership', { memberId: pending })
  t.equal(toPending.statusCode, 409, 'not to a member who never signed in')
  // The refusal says the invitation is not accepted, never whether the address has an account.
  t.match(toPending.json().message, /invited and has not accepted yet/)
  const suspendedPerson = await service.signIn('suspended@members.example')
  const invitedAdmin = (await call(owner, 'POST', '/members', { email: suspendedPerson.email, role: 'admin' })).json().id
  const toInvited = await call(owner, 'POST', '/transfer-ownership', { memberId: invitedAdmin })
  t.equal(toInvited.statusCode, 409, 'not to a member who has not accepted their invitation')
  t.match(toInvited.json().message, /invited and has not accepted/)
  await acceptInvitationOf(app, suspendedPerson)
  const suspended = invitedAdmin
  await db.updateTable('core.organizationMembers').set({ suspendedAt: new Date() }).where('id', '=', suspended).execute()
  t.equal((await call(owner, 'POST', '/transfer-ownership', { memberId: suspended })).statusCode, 409, 'not to a suspended member')
  t.equal(await roleOf(ownerMember), 'owner', 'nothing changed')
  const transferred = await call(owner, 'POST', '/transfer-ownership', { memberId: adminMember })
  t.equal(transferred.statusCode, 200)
  t.match(transferred.json(), { previousOwner: { id: ownerMember, role: 'admin' }, newOwner: { id: adminMember, role: 'owner' } })
  t.equal(await roleOf(ownerMember), 'admin')
  t.equal(await roleOf(adminMember), 'owner')
  // And back, so an owner can now leave once another owner exists.
  t.equal((await call(admin, 'PATCH', `/members/${ownerMember}`, { role: 'owner' })).statusCode, 200)
  t.equal((await call(owner, 'DELETE', `/members/${ownerMember}`)).statusCode, 204, 'an owner may leave while another owner remains')
})

t.test('an admin cannot raise their own product roles, but may lower them', async (t) => {
  const raiser = await service.signIn('raiser@members.example')
  // `admin` owns the organization since the transfer above.
  const raiserMember = (
    await call(admin, 'POST', '/members', { email: raiser.email, role: 'admin', productRoles: { alerting: 'manager' } })
  ).json().id
  await acceptInvitationOf(app, raiser)
  const raised = await call(raiser, 'PUT', `/members/${raiserMember}/product-roles`, {
    productRoles: { alerting: 'admin', insights: 'admin' },
  })
  t.equal(raised.statusCode, 403)
  t.same(
    (await call(raiser, 'GET', `/members/${raiserMember}/product-roles`)).json().productRoles,
    { alerting: 'manager' },
    'nothing changed',
  )
  t.equal(
    (await call(raiser, 'PUT', `/members/${raiserMember}`, { role: 'admin', productRoles: { alerting: 'admin' } })).statusCode,
    403,
    'nor through the whole-member PUT',
  )
  const lowered = await call(raiser, 'PUT', `/members/${raiserMember}/product-roles`, { productRoles: { alerting: 'viewer' } })
  t.equal(lowered.statusCode, 200)
  t.same(lowered.json().productRoles, { alerting: 'viewer' })
})
