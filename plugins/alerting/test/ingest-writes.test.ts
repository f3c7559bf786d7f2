import t from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { subscribe } from '@svc/events'
import { createJobQueue, stopJobQueue } from '@svc/jobs'
import { createTestDatabase } from '@svc/testkit'
import { dispatchInterest } from '../src/alerts/event-bus.js'
import { claimPendingEscalations, escalationsCorrelated } from '../src/alerts/escalation-state.js'
import { fireAlert as fireOne, fireAlerts as fireMany, type ConfigCheck, type Firing } from '../src/alerts/fire.js'
import { mayCorrelate } from '../src/incidents/correlation/subscriber.js'
import { enabledConfigs } from '../src/intake/configs/queries.js'
import { createFireBatcher } from '../src/intake/fire-batcher.js'
import { createWriteOrder } from '../src/intake/write-order.js'

// What a firing event tells ingestion about the work it left: the escalator is woken only for a
// pending escalation, the event dispatcher only for a timeline event that waits for it.
const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
t.teardown(() => database.close())
await migrateToLatest(database.db)
const db = database.db
// Correlation is the one subscriber of the alert event bus here (no outbound webhook or workflow exists).
const interest = dispatchInterest([{ wantsCreated: mayCorrelate }])
const fireAlert = (executor: typeof db, check: ConfigCheck, event: Firing) => fireOne(executor, enabledConfigs, interest, check, event)
const fireAlerts = (on: typeof database, batch: Parameters<typeof fireMany>[3]) => fireMany(on, enabledConfigs, interest, batch)

async function organizationWithConfig(slug: string, routes: boolean): Promise<ConfigCheck> {
  const organization = await db.insertInto('core.organizations').values({ name: slug, slug }).returning('id').executeTakeFirstOrThrow()
  const config = await db
    .insertInto('divinux.webhookConfigs')
    .values({
      organizationId: organization.id,
      name: slug,
      format: 'generic',
      apiKeyPrefix: slug,
      apiKeyHash: `hash-of-${slug}`,
      routingRules: JSON.stringify(routes ? [{ match: {}, escalationPolicyId: '00000000-0000-4000-8000-000000000001' }] : []),
    })
    .returning(['id', 'organizationId', 'apiKeyHash', 'signingSecret'])
    .executeTakeFirstOrThrow()
  return { configId: config.id, organizationId: config.organizationId, apiKeyHash: config.apiKeyHash, signingSecret: config.signingSecret }
}

const firing = (fingerprint: string, priority: string): Firing => ({
  source: 'generic',
  priority,
  groupWindowSeconds: 300,
  event: { action: 'fire', title: fingerprint, fingerprint, labels: {} },
})

const quiet = await organizationWithConfig('quiet', false)
const routed = await organizationWithConfig('routed', true)

t.test('an alert with nowhere to page and nothing to correlate leaves no work', async (t) => {
  t.match(await fireAlert(db, quiet, firing('quiet-p3', 'P3')), { created: true, escalates: false, dispatches: false })
  t.match(
    await fireAlert(db, quiet, firing('quiet-p3', 'P3')),
    { created: false, escalates: false, dispatches: false },
    'nor does a repeat',
  )
})

t.test('a routed alert leaves a pending escalation; an opening priority leaves an event to correlate', async (t) => {
  t.match(await fireAlert(db, routed, firing('routed-p3', 'P3')), { created: true, escalates: true, dispatches: false })
  t.match(await fireAlert(db, routed, firing('routed-p3', 'P3')), { created: false, escalates: false }, 'a repeat starts nothing new')
  t.match(await fireAlert(db, quiet, firing('quiet-p1', 'P1')), { created: true, escalates: false, dispatches: true })
  t.match(await fireAlert(db, quiet, firing('quiet-p1', 'P1')), { created: false, dispatches: false }, 'an occurrence is never dispatched')
})

t.test('a batch answers each event for itself', async (t) => {
  const silent = await organizationWithConfig('silent', false)
  t.match(
    await fireAlerts(database, [
      { check: silent, firing: firing('batch-quiet', 'P4') },
      { check: routed, firing: firing('batch-routed', 'P4') },
    ]),
    [
      { created: true, escalates: false, dispatches: false },
      { created: true, escalates: true, dispatches: false },
    ],
  )
  // An alert that may open an incident waits for correlation, and so does every alert of its
  // organization fired with it, or later while it waits: they may join the incident it opens.
  t.match(
    await fireAlerts(database, [
      { check: silent, firing: firing('batch-opening', 'P2') },
      { check: silent, firing: firing('batch-symptom', 'P4') },
      { check: routed, firing: firing('batch-routed-2', 'P4') },
    ]),
    [
      { created: true, escalates: false, dispatches: true },
      { created: true, escalates: false, dispatches: true },
      { created: true, escalates: true, dispatches: false },
    ],
    'an alert of another organization does not',
  )
  t.match(
    await fireAlerts(database, [{ check: silent, firing: firing('batch-silent-later', 'P5') }]),
    [{ escalates: false, dispatches: true }],
    'nor does the organization’s next alert before the first is correlated (no dispatcher runs here)',
  )
})

t.test('the escalator takes a P1 or P2 alert’s escalation before older ones of lower priority', async (t) => {
  const flooded = await organizationWithConfig('flooded', true)
  const fired = await fireAlerts(database, [
    { check: flooded, firing: firing('flood-p4-a', 'P4') },
    { check: flooded, firing: firing('flood-p4-b', 'P4') },
  ])
  const p2 = await fireAlert(db, flooded, firing('flood-p2', 'P2'))
  const p1 = await fireAlert(db, flooded, firing('flood-p1', 'P1'))
  // No dispatcher runs here: the urgent alerts' correlation is taken as done, as it marks it.
  await db.updateTable('divinux.alertEvents').set({ dispatchedAt: new Date() }).where('alertId', 'in', [p1!.id, p2!.id]).execute()
  await escalationsCorrelated(db, [p1!.id, p2!.id])
  const claimed = await db.transaction().execute((trx) => claimPendingEscalations(trx, 10, 10))
  const ours = claimed.filter((row) => row.organizationId === flooded.organizationId).map((row) => row.alertId)
  t.same(ours, [p2!.id, p1!.id, fired[0]!.id, fired[1]!.id], 'the urgent ones in the order they fired, then the others')
})

t.test('a page waits for correlation as long as the dispatcher makes progress, and 10 s once it has stalled', async (t) => {
  const waiting = await organizationWithConfig('waiting', true)
  const fired = await fireAlert(db, waiting, firing('waiting-p1', 'P1'))
  // It has waited for the dispatcher for a minute.
  for (const table of ['divinux.alertEvents', 'divinux.alertEscalations'] as const)
    await db
      .updateTable(table)
      .set({ createdAt: new Date(Date.now() - 60_000) })
      .where('alertId', '=', fired!.id)
      .execute()
  const claims = (wait?: number) =>
    db.transaction().execute(async (trx) => (await claimPendingEscalations(trx, 50, wait)).map((row) => row.alertId))
  t.notOk((await claims()).includes(fired!.id), 'a dispatcher that makes progress is waited for, however far behind')
  t.ok((await claims(10)).includes(fired!.id), 'a stalled one for 10 s at most')
})

t.test('a batch with alerts that announce themselves commits their announcements with them, one per new alert', async (t) => {
  const jobs = createJobQueue({ sql: database.sql, onError: (error) => t.fail(`job queue: ${error.message}`), supervise: false })
  await jobs.start()
  t.teardown(() => stopJobQueue(jobs))
  await subscribe(jobs, 'alert.created', 'test.alert-created')
  const batcher = createFireBatcher(database, interest, createWriteOrder(), jobs)
  const announced = await organizationWithConfig('announced', false)
  // Handed in in one turn: the first is written alone, the next three together once it committed.
  const [alone, p1, p3, p2] = await Promise.all([
    batcher.fire(announced, firing('announced-first', 'P3')),
    batcher.fire(announced, firing('announced-p1', 'P1'), { autoAnalysis: false }),
    batcher.fire(announced, firing('announced-p3', 'P3')),
    batcher.fire(announced, firing('announced-p2', 'P2'), { autoAnalysis: false }),
  ])
  const createdAt = await db
    .selectFrom('divinux.alerts')
    .select(['id', 'createdAt'])
    .where('id', 'in', [alone!.id, p1!.id, p3!.id, p2!.id])
    .execute()
  const at = new Map(createdAt.map((row) => [row.id, row.createdAt.getTime()]))
  t.equal(new Set([p1!.id, p3!.id, p2!.id].map((id) => at.get(id))).size, 1, 'the three were written in one transaction')
  t.not(at.get(alone!.id), at.get(p1!.id))
  const queued = await database.sql.executeSql("select data from pgboss.job where name = 'test.alert-created'", [])
  t.same(
    new Set(
      (queued.rows as Array<{ data: { alertId: string; priority: string } }>).map((row) => `${row.data.alertId} ${row.data.priority}`),
    ),
    new Set([`${p1!.id} P1`, `${p2!.id} P2`]),
    'the announcing ones announced, once each',
  )
  // Fired again, they are occurrences: nothing more is announced.
  await Promise.all([batcher.fire(announced, firing('announced-p1', 'P1'), { autoAnalysis: false })])
  t.equal((await database.sql.executeSql("select id from pgboss.job where name = 'test.alert-created'", [])).rows.length, 2)
})
