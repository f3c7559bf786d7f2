import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
//
// Until this migration, the query builder renamed the keys inside jsonb values as it renamed
// columns (`kube_namespace` read back as `kubeNamespace`). Most values were only read that way;
// two paths wrote what they read into another row, and those copies are repaired here:
//
// - a workflow run keeps the definition it followed, copied from its workflow;
// - an outbound webhook delivery not yet sent carries the alert, labels included.
//
// A copy is restored only when it is exactly the renamed form of the value it was copied from
// (the workflow as it is now, the alert's labels), so nothing is guessed. Runs of a workflow
// edited since, deliveries already sent and audit entries stay as they were written: their
// original keys are not kept anywhere. A synthetic check's request written back by a change of
// another field had the same fault; only header names with an underscore were affected, and
// they cannot be recovered (docs/decisions/0004-http-conventions.md).

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Kysely's CamelCasePlugin mapping of a name, as it stood: `_x` becomes `X`. */
function camelName(name: string): string {
  let out = name[0] ?? ''
  for (let i = 1; i < name.length; i++) {
    const char = name[i]!
    if (char === '_') continue
    out += name[i - 1] === '_' ? char.toUpperCase() : char
  }
  return out
}

function renamed(value: Json): Json {
  if (Array.isArray(value))
    return value.map((item) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? renamed(item) : item))
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [camelName(key), renamed(item)]))
}

/** A text for comparing documents whatever the order of their keys. */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const keys = Object.keys(value).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key]!)}`).join(',')}}`
}

/** The original, when `stored` is exactly its renamed form and differs from it. */
function restorable(stored: Json, original: Json): boolean {
  const storedText = canonical(stored)
  return storedText !== canonical(original) && storedText === canonical(renamed(original))
}

// A key with an underscore somewhere in the document: only those were renamed.
const UNDERSCORED_KEY = `"[^"]*_[^"]*":`

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const runs = await sql<{ id: string; stored: string; original: string }>`
    select r.id, r.definition::text as stored,
      jsonb_build_object('name', w.name, 'conditions', w.conditions, 'actions', w.actions)::text as original
    from divinux.workflow_runs r join divinux.workflows w on w.id = r.workflow_id
    where r.definition is not null and (w.conditions::text ~ ${UNDERSCORED_KEY} or w.actions::text ~ ${UNDERSCORED_KEY})`.execute(db)
  for (const run of runs.rows) {
    const stored = JSON.parse(run.stored) as Json
    const original = JSON.parse(run.original) as Json
    if (restorable(stored, original))
      await sql`update divinux.workflow_runs set definition = ${run.original}::jsonb where id = ${run.id}`.execute(db)
  }

  const deliveries = await sql<{ id: string; payload: string; labels: string }>`
    select d.id, d.payload, a.labels::text as labels
    from divinux.outbound_webhook_deliveries d join divinux.alerts a on a.id = d.alert_id
    where d.status = 'pending' and a.labels::text ~ ${UNDERSCORED_KEY}`.execute(db)
  for (const delivery of deliveries.rows) {
    const payload = JSON.parse(delivery.payload) as { data?: { alert?: { labels?: Json } } }
    const labels = JSON.parse(delivery.labels) as Json
    const alert = payload.data?.alert
    if (!alert || alert.labels === undefined || !restorable(alert.labels, labels)) continue
    alert.labels = labels
    await sql`update divinux.outbound_webhook_deliveries set payload = ${JSON.stringify(payload)} where id = ${delivery.id}`.execute(db)
  }
}

// The repaired keys are the ones that were sent; there is nothing to undo.
export async function down(): Promise<void> {}
