import t from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { createTestDatabase } from '@svc/testkit'
import { dispatchInterest } from '../src/alerts/event-bus.js'
import { fireAlert as fireOne, fireAlerts as fireMany, type ConfigCheck, type Firing } from '../src/alerts/fire.js'
import { mayCorrelate } from '../src/incidents/correlation/subscriber.js'
import { enabledConfigs } from '../src/intake/configs/queries.js'

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
