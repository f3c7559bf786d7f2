import t from 'tap'
import { sql } from 'kysely'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, startTestService } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const first = await service.signIn('first@owners.example')
const second = await service.signIn('second@owners.example')

async function organizationWithTwoOwners(slug: string) {
  const { id } = (
    await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: first.headers, payload: { name: slug, slug } })
  ).json()
  await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${id}/members`,
    headers: first.headers,
    payload: { email: second.email, role: 'owner' },
  })
  await acceptInvitationOf(app, second)
  const members = await db.selectFrom('core.organizationMembers').select(['id', 'userId']).where('organizationId', '=', id).execute()
  const memberOf = (userId: string) => members.find((member) => member.userId === userId)!.id
  return { id, firstMember: memberOf(first.userId), secondMember: memberOf(second.userId) }
}

async function owners(orgId: string) {
  return db
    .selectFrom('core.organizationMembers')
    .select('userId')
    .where('organizationId', '=', orgId)
    .where('role', '=', 'owner')
    .execute()
}

t.test('demoting the last two owners at once: one succeeds, one fails, an owner remains', async (t) => {
  const org = await organizationWithTwoOwners('race-self')
  // Each owner demotes themselves at the same moment.
  const [a, b] = await Promise.all([
    app.inject({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/members/${org.firstMember}`,
      headers: first.headers,
      payload: { role: 'admin' },
    }),
    app.inject({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/members/${org.secondMember}`,
      headers: second.headers,
      payload: { role: 'admin' },
    }),
  ])
  t.same([a.statusCode, b.statusCode].sort(), [200, 409])
  t.equal((await owners(org.id)).length, 1)
})

t.test('two owners demoting each other at once: the second finds it is no longer an owner', async (t) => {
  const org = await organizationWithTwoOwners('race-each-other')
  const [a, b] = await Promise.all([
    app.inject({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/members/${org.secondMember}`,
      headers: first.headers,
      payload: { role: 'member' },
    }),
    app.inject({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/members/${org.firstMember}`,
      headers: second.headers,
      payload: { role: 'member' },
    }),
  ])
  t.same([a.statusCode, b.statusCode].sort(), [200, 403])
  t.equal((await owners(org.id)).length, 1)
})

t.test('removing both owners at once leaves one', async (t) => {
  const org = await organizationWithTwoOwners('race-leave')
  const results = await Promise.all([
    app.inject({ method: 'DELETE', url: `/api/v1/organizations/${org.id}/members/${org.firstMember}`, headers: first.headers }),
    app.inject({ method: 'DELETE', url: `/api/v1/organizations/${org.id}/members/${org.secondMember}`, headers: second.headers }),
  ])
  t.same(results.map((result) => result.statusCode).sort(), [204, 409])
  t.equal((await owners(org.id)).length, 1)
})

t.test('the database itself refuses to leave an organization without an owner', async (t) => {
  const org = await organizationWithTwoOwners('backstop')
  await t.rejects(db.updateTable('core.organizationMembers').set({ role: 'admin' }).where('organizationId', '=', org.id).execute(), {
    code: '23514',
  })
  t.equal((await owners(org.id)).length, 2, 'the statement was rolled back')
  // Deleting the organization removes its members without tripping the rule.
  await db.deleteFrom('core.organizations').where('id', '=', org.id).execute()
  t.same(await owners(org.id), [])
})

t.test('audit entries cannot be changed or deleted, even with SQL', async (t) => {
  await t.rejects(sql`update core.audit_logs set action = 'tampered'`.execute(db), { code: '42501' })
  await t.rejects(sql`delete from core.audit_logs`.execute(db), { code: '42501' })
})
