import t from 'tap'
import { Migrator, sql } from 'kysely'
import { openDatabase } from '@svc/db'
import { migrations } from '@svc/migrations'
import { createTestDatabase } from '@svc/testkit'

// 0035 restores the copies that were written from a renamed read (decision 0004): only a copy
// that is exactly the renamed form of its source, so an edited workflow's old runs and a sent
// delivery stay as they were.
const databaseUrl = await createTestDatabase(t, { empty: true })
const database = await openDatabase({ databaseUrl })
t.teardown(() => database.close())
const raw = database.db.withoutPlugins()
const migrator = new Migrator({ db: raw, provider: { getMigrations: async () => migrations } })
const before = await migrator.migrateTo('0034_status_notification_log')
if (before.error) throw before.error

const one = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(raw)).rows[0] as T
const { id: orgId } = await one<{ id: string }>(sql`insert into core.organizations (name, slug) values ('Keys', 'keys') returning id`)
const conditions = [{ type: 'labels', match: { kube_namespace: 'billing', HTTPCode: '503' } }]
const actions = [{ type: 'set_priority', priority: 'P2' }]
const { id: workflowId } = await one<{ id: string }>(sql`
  insert into divinux.workflows (organization_id, name, trigger, conditions, actions)
  values (${orgId}, 'Billing', 'alert.created', ${JSON.stringify(conditions)}::jsonb, ${JSON.stringify(actions)}::jsonb) returning id`)
const { id: editedId } = await one<{ id: string }>(sql`
  insert into divinux.workflows (organization_id, name, trigger, conditions, actions)
  values (${orgId}, 'Edited', 'alert.created', ${JSON.stringify(conditions)}::jsonb, ${JSON.stringify(actions)}::jsonb) returning id`)
const renamedDefinition = (name: string) => ({
  name,
  conditions: [{ type: 'labels', match: { kubeNamespace: 'billing', HTTPCode: '503' } }],
  actions,
})
const run = async (workflow: string, key: string, definition: object) =>
  (
    await one<{ id: string }>(sql`
      insert into divinux.workflow_runs (organization_id, workflow_id, trigger, event_key, occurred_at, definition)
      values (${orgId}, ${workflow}, 'alert.created', ${key}, now(), ${JSON.stringify(definition)}::jsonb) returning id`)
  ).id
const renamedRun = await run(workflowId, 'a', renamedDefinition('Billing'))
// This workflow's name changed since its run: the run's copy is not the renamed form of it.
const editedRun = await run(editedId, 'b', renamedDefinition('Edited before'))

const labels = { kube_namespace: 'billing', __meta_x: 'pod' }
const { id: alertId } = await one<{ id: string }>(sql`
  insert into divinux.alerts (organization_id, source, title, priority, fingerprint, labels)
  values (${orgId}, 'generic', 'Pods restarting', 'P3', 'fp', ${JSON.stringify(labels)}::jsonb) returning id`)
const { id: hookId } = await one<{ id: string }>(sql`
  insert into divinux.outbound_webhooks (organization_id, name, url, events, secret)
  values (${orgId}, 'Sync', 'https://example.com/hook', array['alert.created'], 'whsec_x') returning id`)
const payload = (status: string) =>
  JSON.stringify({
    type: 'alert.created',
    data: { organizationId: orgId, alert: { id: alertId, labels: { kubeNamespace: 'billing', _MetaX: 'pod' } } },
    status,
  })
const delivery = async (status: string) =>
  (
    await one<{ id: string }>(sql`
      insert into divinux.outbound_webhook_deliveries (organization_id, webhook_id, event, alert_id, payload, status)
      values (${orgId}, ${hookId}, 'alert.created', ${alertId}, ${payload(status)}, ${status}) returning id`)
  ).id
const pending = await delivery('pending')
const delivered = await delivery('delivered')

const after = await migrator.migrateTo('0035_json_keys_as_received')
if (after.error) throw after.error

t.test('a run whose copy is the renamed form of its workflow gets the workflow’s keys back', async (t) => {
  const { definition } = await one<{ definition: unknown }>(sql`select definition from divinux.workflow_runs where id = ${renamedRun}`)
  t.same(definition, { name: 'Billing', conditions, actions })
})

t.test('a run of a workflow edited since is left as it was written', async (t) => {
  const { definition } = await one<{ definition: unknown }>(sql`select definition from divinux.workflow_runs where id = ${editedRun}`)
  t.same(definition, renamedDefinition('Edited before'))
})

t.test('a delivery not yet sent carries the alert’s labels as they were received; a sent one is history', async (t) => {
  const stored = async (id: string) =>
    JSON.parse((await one<{ payload: string }>(sql`select payload from divinux.outbound_webhook_deliveries where id = ${id}`)).payload)
  t.same((await stored(pending)).data.alert.labels, labels)
  t.same((await stored(delivered)).data.alert.labels, { kubeNamespace: 'billing', _MetaX: 'pod' })
})
