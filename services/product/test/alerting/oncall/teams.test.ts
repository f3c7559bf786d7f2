import { randomUUID } from 'node:crypto'
import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'oncall', {
  manager: 'manager',
  responder: 'responder',
  viewer: 'viewer',
  bystander: null,
})
const [owner, manager, responder, viewer, bystander, stranger] = ['owner', 'manager', 'responder', 'viewer', 'bystander', 'stranger'].map(
  person,
)
const teams = `/api/v1/organizations/${orgId}/teams`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

async function counts() {
  const [teamRows, memberRows, audits] = await Promise.all([
    db.selectFrom('divinux.teams').select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    db.selectFrom('divinux.teamMembers').select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    db.selectFrom('core.auditLogs').select(db.fn.countAll<number>().as('n')).where('entityType', '=', 'team').executeTakeFirstOrThrow(),
  ])
  return { teams: Number(teamRows.n), members: Number(memberRows.n), audits: Number(audits.n) }
}

let platformTeamId = ''

t.test('an alerting manager creates a team with members and roles; the audit log records it', async (t) => {
  const response = await call(manager!, 'POST', teams, {
    name: 'Platform',
    description: 'Databases and queues',
    members: [
      { userId: responder!.userId, role: 'responder' },
      { userId: manager!.userId, role: 'manager' },
    ],
  })
  t.equal(response.statusCode, 201)
  const team = response.json()
  platformTeamId = team.id
  t.match(team, { name: 'Platform', description: 'Databases and queues', createdBy: manager!.userId })
  t.same(
    team.members.map((member: { email: string; role: string }) => [member.email, member.role]),
    [
      ['manager@oncall.example', 'manager'],
      ['responder@oncall.example', 'responder'],
    ],
    'members by e-mail, with their team roles',
  )
  const audit = await db.selectFrom('core.auditLogs').selectAll().where('entityId', '=', team.id).executeTakeFirstOrThrow()
  t.match(audit, { action: 'team.created', product: 'alerting', organizationId: orgId, actorUserId: manager!.userId })
})

t.test('viewers read teams; members without an alerting role get 403, other organizations 404', async (t) => {
  const list = await call(viewer!, 'GET', teams)
  t.equal(list.statusCode, 200)
  t.match(list.json(), { data: [{ id: platformTeamId, name: 'Platform', memberCount: 2 }], meta: { page: 1, limit: 20, total: 1 } })
  t.equal((await call(viewer!, 'GET', `${teams}/${platformTeamId}`)).statusCode, 200)
  t.equal((await call(bystander!, 'GET', teams)).statusCode, 403)
  t.equal((await call(stranger!, 'GET', teams)).statusCode, 404)
  t.equal(
    (await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/teams/${platformTeamId}`)).statusCode,
    404,
    'not by its id either',
  )
  t.equal((await call(viewer!, 'GET', `${teams}/not-a-uuid`)).statusCode, 404)
})

t.test('refused changes answer 4xx naming the field and change nothing', async (t) => {
  const before = await counts()
  const cases: Array<[string, Who, object, number, RegExp?]> = [
    ['a viewer', viewer!, { name: 'Viewers' }, 403],
    ['a responder', responder!, { name: 'Responders' }, 403],
    ['an empty name', manager!, { name: '' }, 400, /name/],
    ['a blank name', manager!, { name: '   ' }, 400, /name/],
    ['an unknown field', manager!, { name: 'X', colour: 'red' }, 400],
    ['an unknown role', manager!, { name: 'X', members: [{ userId: viewer!.userId, role: 'boss' }] }, 400, /members\/0\/role/],
    ['a user who is no member', manager!, { name: 'X', members: [{ userId: randomUUID(), role: 'responder' }] }, 400, /members\/0\/userId/],
    [
      "another organization's user",
      manager!,
      {
        name: 'X',
        members: [
          { userId: viewer!.userId, role: 'observer' },
          { userId: stranger!.userId, role: 'responder' },
        ],
      },
      400,
      /members\/1\/userId/,
    ],
    [
      'a member listed twice',
      manager!,
      {
        name: 'X',
        members: [
          { userId: viewer!.userId, role: 'observer' },
          { userId: viewer!.userId, role: 'responder' },
        ],
      },
      400,
      /members\/1\/userId is listed twice/,
    ],
    ['a taken name in another case', manager!, { name: 'PLATFORM' }, 409],
  ]
  for (const [what, who, payload, status, message] of cases) {
    const response = await call(who, 'POST', teams, payload)
    t.equal(response.statusCode, status, what)
    if (message) t.match(response.json().message, message, `${what}: the field is named`)
  }
  t.same(await counts(), before, 'no team, member or audit entry was written')
})

t.test('members are added, change role and leave, each change audited', async (t) => {
  const member = (userId: string) => `${teams}/${platformTeamId}/members/${userId}`
  const added = await call(manager!, 'PUT', member(viewer!.userId), { role: 'observer' })
  t.equal(added.statusCode, 201)
  t.match(added.json(), { userId: viewer!.userId, email: 'viewer@oncall.example', role: 'observer' })
  const changed = await call(owner!, 'PUT', member(viewer!.userId), { role: 'responder' })
  t.equal(changed.statusCode, 200, 'an owner may too')
  t.equal(changed.json().role, 'responder')
  t.equal((await call(manager!, 'PUT', member(stranger!.userId), { role: 'observer' })).statusCode, 400, 'not a member of the organization')
  t.equal((await call(manager!, 'PUT', member(viewer!.userId), { role: 'chief' })).statusCode, 400)
  t.equal((await call(responder!, 'PUT', member(viewer!.userId), { role: 'manager' })).statusCode, 403)
  t.equal((await call(manager!, 'DELETE', member(viewer!.userId))).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', member(viewer!.userId))).statusCode, 404, 'gone already')
  const actions = await db
    .selectFrom('core.auditLogs')
    .select('action')
    .where('entityId', '=', platformTeamId)
    .orderBy('createdAt')
    .orderBy('id')
    .execute()
  t.same(
    actions.map((row) => row.action),
    ['team.created', 'team.member_added', 'team.member_role_changed', 'team.member_removed'],
  )
})

t.test('teams are renamed, searched, paged and deleted', async (t) => {
  for (const name of ['Payments', 'Search', 'Storage']) t.equal((await call(manager!, 'POST', teams, { name })).statusCode, 201)
  const renamed = await call(manager!, 'PATCH', `${teams}/${platformTeamId}`, { name: 'Platform core', description: null })
  t.equal(renamed.statusCode, 200)
  t.match(renamed.json(), { name: 'Platform core', description: null, members: [{}, {}] })
  t.equal((await call(manager!, 'PATCH', `${teams}/${platformTeamId}`, { name: 'payments' })).statusCode, 409)
  t.equal((await call(manager!, 'PATCH', `${teams}/${platformTeamId}`, {})).statusCode, 400, 'nothing to change')

  const found = (await call(viewer!, 'GET', `${teams}?q=s&limit=2&page=2`)).json()
  t.same(
    found.data.map((team: { name: string }) => team.name),
    ['Storage'],
    'names containing "s" (Payments, Search, Storage), by name, second page',
  )
  t.same(found.meta, { page: 2, limit: 2, total: 3 })
  t.equal((await call(viewer!, 'GET', `${teams}?q=${encodeURIComponent('%')}`)).json().meta.total, 0, '% is taken literally')

  t.equal((await call(stranger!, 'DELETE', `/api/v1/organizations/${otherOrgId}/teams/${platformTeamId}`)).statusCode, 404)
  t.equal((await call(manager!, 'DELETE', `${teams}/${platformTeamId}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${teams}/${platformTeamId}`)).statusCode, 404)
  const members = await db.selectFrom('divinux.teamMembers').select('userId').where('teamId', '=', platformTeamId).execute()
  t.same(members, [], 'its memberships went with it')
  const deleted = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'changes'])
    .where('entityId', '=', platformTeamId)
    .where('action', '=', 'team.deleted')
    .executeTakeFirstOrThrow()
  t.match(deleted.changes, { before: { name: 'Platform core', members: [{ role: 'manager' }, { role: 'responder' }] } })
})
