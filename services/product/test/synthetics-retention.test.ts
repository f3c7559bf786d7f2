import { sql } from 'kysely'
import t from 'tap'
import { MAINTENANCE_QUEUE, ROLLUP_QUEUE } from '@svc/plugin-synthetics'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// The scheduled upkeep of results: roll-ups per hour and day, raw results removed after
// SYNTHETICS_RETENTION_DAYS in batches, runs nobody took marked missed, overdue checks run once.
// This service keeps the production rule for targets: no private addresses.

const service = await startTestService(t, buildApp, {
  config: { outbound: { allowPrivateTargets: false }, synthetics: { region: 'local', retentionDays: 2, concurrency: 5 } },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'upkeep', {
  viewer: { synthetics: 'viewer' },
  manager: { synthetics: 'manager' },
})
const viewer = person('viewer')
const manager = person('manager')
const base = `/api/v1/synthetics/organizations/${orgId}`

const check = await db
  .insertInto('divinux.syntheticChecks')
  .values({
    organizationId: orgId,
    name: 'History',
    kind: 'tcp',
    request: sql`'{"host":"127.0.0.1","port":1}'::jsonb`,
    frequencySeconds: 60,
    timeoutMs: 1000,
    regions: sql`array['local', 'eu']::text[]`,
    paused: true,
  } as never)
  .returning('id')
  .executeTakeFirstOrThrow()

const hour = 3_600_000
// The roll-up job takes the two hours before the one it is for; the test names that hour in the
// job, so the job and the runs below agree on "this hour" however the clock turns meanwhile.
const thisHour = Math.floor(Date.now() / hour) * hour
const rollUpThisHour = () => app.jobs.send(ROLLUP_QUEUE, { at: new Date(thisHour + hour / 2).toISOString() })

/** Runs of the check, `count` per hour in the hour starting `hoursAgo` hours before this one, every tenth failing. */
async function runsIn(hoursAgo: number, count: number, region = 'local') {
  const start = thisHour - hoursAgo * hour
  await db
    .insertInto('divinux.syntheticRuns')
    .values(
      Array.from({ length: count }, (_, index) => {
        const at = new Date(start + index * (hour / count))
        return {
          checkId: check.id,
          organizationId: orgId,
          region,
          dueAt: at,
          createdAt: at,
          state: 'done',
          status: index % 10 === 0 ? 'failing' : 'passing',
          totalMs: index + 1,
          finishedAt: at,
        }
      }),
    )
    .execute()
}

t.test('the hourly job rolls the last two hours up per region with percentiles; long ranges read the roll-ups', async (t) => {
  await runsIn(1, 100)
  await runsIn(2, 50)
  await runsIn(1, 10, 'eu')
  await rollUpThisHour()
  const rollups = await until('the roll-ups', async () => {
    const rows = await db
      .selectFrom('divinux.syntheticRollups')
      .selectAll()
      .where('interval', '=', 'hour')
      .orderBy('bucketStart')
      .orderBy('region')
      .execute()
    return rows.length === 3 ? rows : undefined
  })
  t.match(rollups[2], { region: 'local', runs: 100, failures: 10, degraded: 0, avgMs: 50.5, p50Ms: 50.5 })
  t.equal(Math.round(rollups[2]!.p99Ms!), 99)
  t.match(rollups[0], { region: 'local', runs: 50, failures: 5 })

  const from = new Date(thisHour - 30 * 86_400_000).toISOString()
  const stats = (
    await app.inject({ method: 'GET', url: `${base}/checks/${check.id}/stats?interval=hour&from=${from}`, headers: viewer.headers })
  ).json()
  t.equal(stats.source, 'rollups', 'a 30-day range reads the roll-ups')
  t.match(stats.data.at(-1), { runs: 110, failures: 11, availability: 90 })
})

t.test('the maintenance job removes raw results past retention in batches; the roll-ups stay', async (t) => {
  await runsIn(24 * 3, 20)
  const before = await db
    .selectFrom('divinux.syntheticRuns')
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow()
  // Counted rather than fixed: shortly after midnight UTC the hours rolled up above are
  // yesterday's, and the roll-up job adds that day's roll-up too.
  const rollupsBefore = await db.selectFrom('divinux.syntheticRollups').selectAll().orderBy(['region', 'interval', 'bucketStart']).execute()
  await app.jobs.send(MAINTENANCE_QUEUE, {})
  await until('the old runs to go', async () => {
    const after = await db
      .selectFrom('divinux.syntheticRuns')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow()
    return after.n === before.n - 20
  })
  t.ok(rollupsBefore.length >= 3)
  t.same(
    await db.selectFrom('divinux.syntheticRollups').selectAll().orderBy(['region', 'interval', 'bucketStart']).execute(),
    rollupsBefore,
    'roll-ups are kept',
  )
})

t.test('runs nobody took are marked missed; a check overdue by more than a period runs once, now', async (t) => {
  const waiting = await db
    .insertInto('divinux.syntheticRuns')
    .values({ checkId: check.id, organizationId: orgId, region: 'eu', dueAt: new Date(Date.now() - 10 * 60_000) })
    .returning('id')
    .executeTakeFirstOrThrow()
  // The service was down for five minutes: five due times passed.
  await sql`update divinux.synthetic_checks set paused = false, next_due_at = now() - interval '5 minutes' where id = ${check.id}`.execute(
    db,
  )
  const taken = Date.now()
  const { nextDueAt } = await until('the check to run again', () =>
    db
      .selectFrom('divinux.syntheticChecks')
      .select('nextDueAt')
      .where('id', '=', check.id)
      .where('nextDueAt', '>', new Date(taken))
      .executeTakeFirst(),
  )
  // The runs the scheduler made now: the one left waiting is due long before, and those of the
  // hour before, written by the test with their own creation times, were made long before.
  const since = await db
    .selectFrom('divinux.syntheticRuns')
    .select(['region', 'dueAt'])
    .where('checkId', '=', check.id)
    .where('dueAt', '>=', new Date(taken - 60_000))
    .where('createdAt', '>=', new Date(taken - 1000))
    .orderBy('region')
    .execute()
  t.same(
    since.map((run) => run.region),
    ['eu', 'local'],
    'one run per region, not one per missed due time',
  )
  t.equal(nextDueAt!.getTime() - since[0]!.dueAt.getTime(), 60_000, 'and the next is a period later')
  await sql`update divinux.synthetic_checks set paused = true, next_due_at = null where id = ${check.id}`.execute(db)

  await app.jobs.send(MAINTENANCE_QUEUE, {})
  await until(
    'the run to be missed',
    async () =>
      (await db.selectFrom('divinux.syntheticRuns').select('state').where('id', '=', waiting.id).executeTakeFirstOrThrow()).state ===
      'missed',
  )
})

t.test('targets on loopback, private and link-local addresses are refused when ALLOW_PRIVATE_TARGETS is off', async (t) => {
  const cases: Array<[object, RegExp]> = [
    [{ kind: 'http', request: { url: 'http://127.0.0.1:8080/health' } }, /request\/url .*non-public address/],
    [{ kind: 'http', request: { url: 'http://localhost/' } }, /request\/url .*non-public address/],
    [{ kind: 'tcp', request: { host: '10.0.0.5', port: 5432 } }, /request\/host .*non-public address/],
    [{ kind: 'tls', request: { host: '169.254.169.254' } }, /request\/host .*non-public address/],
    [
      { kind: 'dns', request: { name: 'example.com', recordType: 'A', nameserver: '192.168.1.1:53' } },
      /request\/nameserver .*non-public address/,
    ],
    [{ kind: 'http', request: { url: 'http://[::1]/' } }, /request\/url .*non-public address/],
  ]
  for (const [payload, message] of cases) {
    const response = await app.inject({
      method: 'POST',
      url: `${base}/checks`,
      headers: manager.headers,
      payload: { name: 'Inside', frequencySeconds: 60, ...payload },
    })
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.match(response.json().message, message)
  }
})

t.test('ranges are checked, results filter by time, and relays are renamed and moved to other regions', async (t) => {
  const get = (url: string) => app.inject({ method: 'GET', url, headers: viewer.headers })
  const now = new Date().toISOString()
  t.equal((await get(`${base}/checks/${check.id}/stats?from=${now}&to=${now}`)).statusCode, 400)
  t.equal((await get(`${base}/checks/${check.id}/sla?from=${now}&to=${now}`)).statusCode, 400)
  t.equal((await get(`${base}/checks/${check.id}/results?from=${now}&to=${now}`)).statusCode, 400)
  const from = new Date(thisHour - 2 * hour).toISOString()
  const to = new Date(thisHour - hour).toISOString()
  const window = (await get(`${base}/checks/${check.id}/results?from=${from}&to=${to}&limit=100`)).json()
  t.equal(window.meta.total, 50, 'the hour two hours ago')
  const daily = (await get(`${base}/checks/${check.id}/stats?interval=day`)).json()
  t.equal(daily.source, 'rollups', 'a day interval over 30 days reads the roll-ups')
  const sla = (await get(`${base}/checks/${check.id}/sla?from=${new Date(thisHour - 10 * 86_400_000).toISOString()}`)).json()
  t.ok(sla.runs > 0, 'older than retention: from the hourly roll-ups, the rest from the raw runs')

  const relay = (
    await app.inject({ method: 'POST', url: `${base}/relays`, headers: manager.headers, payload: { name: 'Lab', regions: ['lab'] } })
  ).json()
  const renamed = await app.inject({
    method: 'PATCH',
    url: `${base}/relays/${relay.id}`,
    headers: manager.headers,
    payload: { name: ' Lab 2 ', regions: ['lab', 'lab-2'] },
  })
  t.match(renamed.json(), { name: 'Lab 2', regions: ['lab', 'lab-2'], healthy: false })
  t.equal(
    (await app.inject({ method: 'PATCH', url: `${base}/relays/${relay.id}`, headers: manager.headers, payload: { regions: ['local'] } }))
      .statusCode,
    400,
  )
  t.equal((await app.inject({ method: 'GET', url: `${base}/relays/not-a-uuid`, headers: viewer.headers })).statusCode, 404)
})
