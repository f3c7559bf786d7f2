import { sql } from 'kysely'
import t from 'tap'
import { publish } from '@svc/events'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'leavers', {
  manager: 'manager',
  ada: 'responder',
  bo: 'responder',
  viewer: 'viewer',
})
const [manager, ada, bo, viewer] = ['manager', 'ada', 'bo', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
async function created(url: string, payload: object): Promise<{ id: string }> {
  const response = await call(manager!, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.body}`)
  return response.json()
}

const schedule = await created(`${base}/schedules`, {
  name: 'Primary',
  timeZone: 'UTC',
  layers: [
    { name: 'Week', start: '2026-01-05', handoffTime: '09:00', turn: { length: 1, unit: 'weeks' }, users: [ada!.userId, bo!.userId] },
  ],
})
const later = new Date(Date.now() + 86_400_000)
await created(`${base}/schedules/${schedule.id}/overrides`, {
  userId: ada!.userId,
  start: later.toISOString(),
  end: new Date(later.getTime() + 3_600_000).toISOString(),
})
const team = await created(`${base}/teams`, {
  name: 'Backend',
  members: [
    { userId: ada!.userId, role: 'responder' },
    { userId: bo!.userId, role: 'manager' },
  ],
})
const policy = await created(`${base}/escalation-policies`, {
  name: 'Ada first',
  steps: [
    { delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] },
    { delayMinutes: 5, targets: [{ type: 'schedule', id: schedule.id }] },
  ],
})

/** What the platform does when a member is removed: the membership goes, and the event is published with it. */
async function removeFromOrganization(userId: string) {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('core.organizationMembers').where('organizationId', '=', orgId).where('userId', '=', userId).execute()
    await publish(app.jobs, trx, 'member.removed', { organizationId: orgId, userId })
  })
}

t.test('someone re-added before the event is handled keeps their place', async (t) => {
  await publish(app.jobs, db, 'member.removed', { organizationId: orgId, userId: bo!.userId })
  await until('the event to be handled', async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pgboss.job where name = 'alerting.member-removed' and state in ('created', 'retry', 'active')`.execute(
      db,
    )
    return rows[0]?.n === 0
  })
  t.same((await call(viewer!, 'GET', `${base}/schedules/${schedule.id}`)).json().layers[0].users, [ada!.userId, bo!.userId])
})

t.test('a removed member leaves rotations, overrides, teams and policies, each change audited as the system’s', async (t) => {
  await removeFromOrganization(ada!.userId)
  const layers = await until('the rotation to lose her', async () => {
    const found = (await call(viewer!, 'GET', `${base}/schedules/${schedule.id}`)).json().layers
    return !found[0].users.includes(ada!.userId) && found
  })
  t.same(layers[0].users, [bo!.userId])
  t.same((await call(viewer!, 'GET', `${base}/schedules/${schedule.id}/overrides`)).json().data, [], 'her coming override is gone')
  t.same(
    (await call(viewer!, 'GET', `${base}/teams/${team.id}`)).json().members.map((member: { userId: string }) => member.userId),
    [bo!.userId],
  )
  const after = (await call(viewer!, 'GET', `${base}/escalation-policies/${policy.id}`)).json()
  t.same(after.steps[0].targets, [])
  t.same(after.problems, ['steps/0 has no targets left: it pages no one until one is added'], 'the policy says so')
  const audits = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'actorType'])
    .where('organizationId', '=', orgId)
    .where('actorType', '=', 'system')
    .orderBy('createdAt')
    .execute()
  t.same(audits.map((row) => row.action).sort(), [
    'escalation_policy.target_removed',
    'schedule.member_removed',
    'schedule.override_deleted',
    'team.member_removed',
  ])
})
