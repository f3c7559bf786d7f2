import t from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { createJobQueue, stopJobQueue } from '@svc/jobs'
import { createTestDatabase } from '@svc/testkit'
import { dispatchInterest } from '../src/alerts/event-bus.js'
import { fireAlert, fireAlerts, type ConfigCheck } from '../src/alerts/fire.js'
import { claimUndispatchedEvents, markDispatched } from '../src/alerts/queries.js'
import { correlationSubscriber, mayCorrelate } from '../src/incidents/correlation/subscriber.js'
import { enabledConfigs } from '../src/intake/configs/queries.js'

// One dispatcher batch correlates its alerts together (decision 0019, "Correlation"): their best
// matches are read in one statement, yet each alert sees the incidents the batch opened before
// it, as if the alerts had been correlated one at a time, the P1 and P2 alerts first.
const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
await migrateToLatest(database.db)
const db = database.db
const jobs = createJobQueue({ sql: database.sql, onError: (error) => t.fail(`job queue: ${error.message}`) })
await jobs.start()
t.teardown(async () => {
  await stopJobQueue(jobs)
  await database.close()
})
const interest = dispatchInterest([{ wantsCreated: mayCorrelate }])
const subscriber = correlationSubscriber({ jobs, correlated: () => undefined })

async function organization(slug: string): Promise<ConfigCheck> {
  const organization = await db.insertInto('core.organizations').values({ name: slug, slug }).returning('id').executeTakeFirstOrThrow()
  const config = await db
    .insertInto('divinux.webhookConfigs')
    .values({ organizationId: organization.id, name: slug, format: 'generic', apiKeyPrefix: slug, apiKeyHash: `hash-of-${slug}` })
    .returning(['id', 'organizationId', 'apiKeyHash', 'signingSecret'])
    .executeTakeFirstOrThrow()
  return { configId: config.id, organizationId: config.organizationId, apiKeyHash: config.apiKeyHash, signingSecret: config.signingSecret }
}

/** Fires the alerts one after another, in that order; answers their ids by fingerprint. */
async function fire(config: ConfigCheck, alerts: Array<{ fingerprint: string; priority: string; service: string }>) {
  const ids: Record<string, string> = {}
  for (const { fingerprint, priority, service } of alerts) {
    const fired = await fireAlert(db, enabledConfigs, interest, config, {
      source: 'generic',
      priority,
      groupWindowSeconds: 300,
      event: { action: 'fire', title: fingerprint, fingerprint, service, labels: {} },
    })
    if (!fired) throw new Error(`${fingerprint} was not fired`)
    ids[fingerprint] = fired.id
  }
  return ids
}

/** Correlates every undispatched event as one dispatcher batch. */
async function correlateOneBatch() {
  await db.transaction().execute(async (trx) => {
    const events = await claimUndispatchedEvents(trx, 1_000)
    await subscriber.handle(trx, events)
    await markDispatched(
      trx,
      events.map((event) => event.id),
    )
  })
}

/** The incident of each alert (null: none), by the alert's fingerprint. */
async function incidentsOf(ids: Record<string, string>) {
  const links = await db
    .selectFrom('divinux.incidentAlerts')
    .select(['alertId', 'incidentId', 'rule'])
    .where('alertId', 'in', Object.values(ids))
    .execute()
  return Object.fromEntries(
    Object.entries(ids).map(([fingerprint, id]) => {
      const link = links.find((row) => row.alertId === id)
      return [fingerprint, link ? { incidentId: link.incidentId, rule: link.rule } : null]
    }),
  )
}

t.test('alerts of one batch join incidents open before it and incidents the batch opened, its urgent alerts placed first', async (t) => {
  const config = await organization('one-batch')
  const before = await fire(config, [{ fingerprint: 'billing-down', priority: 'P1', service: 'billing' }])
  await correlateOneBatch()
  const billing = (await incidentsOf(before))['billing-down']!.incidentId

  const batch = await fire(config, [
    { fingerprint: 'search-slow-early', priority: 'P3', service: 'search' },
    { fingerprint: 'search-down', priority: 'P1', service: 'search' },
    { fingerprint: 'search-slow', priority: 'P3', service: 'search' },
    { fingerprint: 'billing-slow', priority: 'P3', service: 'billing' },
    { fingerprint: 'mail-down', priority: 'P2', service: 'mail' },
    { fingerprint: 'mail-slow', priority: 'P3', service: 'mail' },
  ])
  await correlateOneBatch()
  const placed = await incidentsOf(batch)
  t.match(placed['search-down'], { rule: 'priority' }, 'a P1 opens an incident')
  t.same(
    placed['search-slow-early'],
    { incidentId: placed['search-down']!.incidentId, rule: 'service' },
    'an alert claimed before it is placed after it, and joins it (a root written just after its symptoms)',
  )
  t.same(
    placed['search-slow'],
    { incidentId: placed['search-down']!.incidentId, rule: 'service' },
    'and a later alert of its service joins it',
  )
  t.same(placed['billing-slow'], { incidentId: billing, rule: 'service' }, 'an incident open before the batch keeps its match')
  t.same(placed['mail-slow'], { incidentId: placed['mail-down']!.incidentId, rule: 'service' }, 'each incident the batch opened')

  const timeline = await db
    .selectFrom('divinux.incidentTimeline')
    .select(['incidentId', 'data'])
    .where('kind', '=', 'alerts_linked')
    .where('organizationId', '=', config.organizationId)
    .execute()
  t.same(
    new Map(timeline.map((row) => [row.incidentId, row.data])),
    new Map([
      [placed['search-down']!.incidentId, { alertIds: [batch['search-slow-early'], batch['search-slow']], rules: { service: 2 } }],
      [billing, { alertIds: [batch['billing-slow']], rules: { service: 1 } }],
      [placed['mail-down']!.incidentId, { alertIds: [batch['mail-slow']], rules: { service: 1 } }],
    ]),
    'one timeline entry per incident joined',
  )
  const audited = await db
    .selectFrom('core.auditLogs')
    .select('entityId')
    .where('action', '=', 'incident.alerts_correlated')
    .where('organizationId', '=', config.organizationId)
    .execute()
  t.equal(audited.length, 3, 'and one audit entry per incident')
})

t.test('a batch that opens many incidents places every later alert where one at a time would', async (t) => {
  const config = await organization('many-openings')
  // More openings, each changing a later alert's match, than the batch asks again for together.
  const services = Array.from({ length: 12 }, (_, index) => `service-${index}`)
  const batch = await fire(
    config,
    services.flatMap((service) => [
      { fingerprint: `${service}-down`, priority: 'P1', service },
      { fingerprint: `${service}-slow`, priority: 'P3', service },
    ]),
  )
  await correlateOneBatch()
  const placed = await incidentsOf(batch)
  for (const service of services)
    t.same(
      placed[`${service}-slow`],
      { incidentId: placed[`${service}-down`]!.incidentId, rule: 'service' },
      `${service}'s symptom joins its own incident`,
    )
  t.equal(new Set(Object.values(placed).map((link) => link?.incidentId)).size, services.length, 'one incident per service')
})

t.test('a symptom fired in the same statement as the alert that opens its incident joins it', async (t) => {
  const config = await organization('one-statement')
  const firing = (fingerprint: string, priority: string) => ({
    check: config,
    firing: {
      source: 'generic',
      priority,
      groupWindowSeconds: 300,
      event: { action: 'fire' as const, title: fingerprint, fingerprint, service: 'queue', labels: {} },
    },
  })
  const fired = await fireAlerts(database, enabledConfigs, interest, [firing('queue-down', 'P1'), firing('queue-slow', 'P3')])
  t.match(fired, [{ dispatches: true }, { dispatches: true }], 'in a quiet organization, the symptom waits for correlation too')
  await correlateOneBatch()
  const [down, slow] = fired
  if (!down || !slow) throw new Error('both alerts are fired')
  const placed = await incidentsOf({ 'queue-down': down.id, 'queue-slow': slow.id })
  t.same(placed['queue-slow'], { incidentId: placed['queue-down']!.incidentId, rule: 'service' })
})
