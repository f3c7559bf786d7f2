import { CompiledQuery, sql, type RawBuilder } from 'kysely'
import { keptPrepared, type Database, type Executor } from '@svc/db'
import type { DispatchInterest } from './event-bus.js'
import { moveExpressions, type MoveTo } from './lifecycle.js'
import { URGENT_PRIORITIES, type Priority } from './model.js'

// The writes of one ingested event, each a single statement: the alert change and its timeline
// event together, and only while the config that authenticated the delivery is still what the
// caller saw (same key, same secret, enabled). That condition is what lets ingestion keep
// configs in memory: a rotated key or secret, or a disabled config, makes the statement write
// nothing, and the caller looks the config up again. One statement is also one round trip,
// which is most of what an event costs (decision 0007, `pnpm bench:ingest`).

/** One event of a delivery, whatever the tool that sent it: the alert model ingestion works on. */
export interface IngestedEvent {
  /** What makes two deliveries "the same problem". */
  fingerprint: string
  action: 'fire' | 'acknowledge' | 'resolve'
  title: string
  description?: string
  /** Absent: the config's default priority. */
  priority?: Priority
  service?: string
  groupKey?: string
  labels: Record<string, string>
  /** When the tool says it happened (ISO 8601), part of the retry key when no delivery id is sent. */
  occurredAt?: string
  /** When the problem began by the sender's clock (ISO 8601), for the alert's onset; absent when not given or unreadable. */
  startedAt?: string
  /** The runbook the sender names (an http(s) URL), for the person paged. */
  runbookUrl?: string
  /** The source's own view of the problem (an http(s) URL: Alertmanager's generatorURL, PagerDuty's client_url). */
  sourceUrl?: string
}

/** The config as the caller authenticated it. */
export interface ConfigCheck {
  configId: string
  organizationId: string
  apiKeyHash: string
  signingSecret: string | null
}

/**
 * The configs deliveries authenticate against, as intake (their owner) publishes them: a relation
 * of the enabled configs with columns `id, organization_id, api_key_hash, signing_secret` and
 * `escalates` (it names a policy or routing rules). The statements below join it, so the config
 * rules stay intake's and this module names none of its tables.
 */
export type EnabledConfigs = RawBuilder<unknown>

/** The one config the caller authenticated, while it is still what the caller saw. */
const configStillValid = (configs: EnabledConfigs, check: ConfigCheck) => sql`
  select id, escalates from (${configs}) enabled_config
  where id = ${check.configId} and organization_id = ${check.organizationId} and api_key_hash = ${check.apiKeyHash}
    and signing_secret is not distinct from ${check.signingSecret}`

/**
 * A repeat of an alert is counted on its one `occurred` row (the partial unique index
 * `alert_events_one_occurrence_row`), with the latest repeat's labels and time.
 */
export const countRepeats = sql`
  on conflict (alert_id) where type = 'occurred'
  do update set occurrences = divinux.alert_events.occurrences + 1, last_occurred_at = excluded.last_occurred_at, data = excluded.data`

/** Whether a priority opens incidents and pages first (P1, P2), as SQL. */
export const urgent = (priority: RawBuilder<unknown>) =>
  sql<boolean>`${priority} in (${sql.join([...URGENT_PRIORITIES].map((opening) => sql.lit(opening)))})`

/**
 * A new alert of a config that escalates (a policy or routing rules) gets its escalation row in
 * the statement that creates it, so no alert that should page is ever left without one; the
 * escalator starts it (paging/escalator.ts), a P1's or P2's before others (`urgent`), once its
 * alert is correlated when its `created` event went to the dispatcher (`awaits_correlation`,
 * cleared by the dispatcher). `alerts` yields id, organization_id, config_id, priority, created,
 * escalates and waiting (its event is for the dispatcher); the statement returns the alert ids it
 * wrote a row for.
 */
const pendingEscalation = (alerts: RawBuilder<unknown>) => sql`
  insert into divinux.alert_escalations (alert_id, organization_id, config_id, state, urgent, awaits_correlation)
  select fired.id, fired.organization_id, fired.config_id, 'pending', ${urgent(sql`fired.priority`)}, fired.waiting
  from (${alerts}) fired
  where fired.created and fired.escalates
  returning alert_id`

/**
 * A firing event: a new alert (in the group of the first alert with its group key inside the
 * window), or one more occurrence of the unresolved alert with its fingerprint; the partial
 * unique index decides, so concurrent deliveries cannot both create. Undefined when the config
 * changed.
 */
export interface Firing {
  source: string
  priority: string
  groupWindowSeconds: number
  event: IngestedEvent
}

/**
 * What firing an event wrote: its alert, and whether it left work for the escalator (a pending
 * escalation) or for the event dispatcher (a `created` event not written dispatched; it never
 * dispatches `occurred`), so that ingestion wakes each only when there is something for it.
 */
export interface Fired {
  id: string
  created: boolean
  escalates: boolean
  dispatches: boolean
}

/**
 * `interest` says whether the new alert's `created` event is for the event bus (its subscribers'
 * conditions, alerts/event-bus.ts): otherwise it is written as dispatched, and the hot path
 * leaves the bus nothing to claim and update.
 */
export async function fireAlert(
  db: Executor,
  configs: EnabledConfigs,
  interest: DispatchInterest,
  check: ConfigCheck,
  firing: Firing,
): Promise<Fired | undefined> {
  const { event } = firing
  const organizationId = check.organizationId
  const result = await sql<Fired>`${keptPrepared}
    with config as (${configStillValid(configs, check)}),
    upserted as (
      insert into divinux.alerts (organization_id, config_id, source, title, description, priority, service, fingerprint, group_key, started_at,
        runbook_url, source_url, group_id, labels)
      select ${organizationId}, config.id, ${firing.source}, ${event.title}, ${event.description ?? null}, ${firing.priority}, ${event.service ?? null},
        ${event.fingerprint}, ${event.groupKey ?? null}, least(${event.startedAt ?? null}::timestamptz, now()),
        ${event.runbookUrl ?? null}, ${event.sourceUrl ?? null},
        (select first.id from divinux.alerts first
          where first.organization_id = ${organizationId} and first.group_key = ${event.groupKey ?? null} and first.group_id is null
            and first.created_at > now() - make_interval(secs => ${firing.groupWindowSeconds})
          order by first.created_at limit 1),
        ${JSON.stringify(event.labels)}::jsonb
      from config
      on conflict (organization_id, fingerprint) where status <> 'resolved'
      do update set occurrences = divinux.alerts.occurrences + 1, last_seen_at = now(), updated_at = now()
      returning id, xmax = 0 as created
    ),
    timeline as (
      insert into divinux.alert_events (organization_id, alert_id, type, data, last_occurred_at, dispatched_at)
      select ${organizationId}, upserted.id, case when upserted.created then 'created' else 'occurred' end,
        ${JSON.stringify({ source: firing.source, title: event.title, labels: event.labels })}::jsonb,
        case when upserted.created then null else now() end,
        ${interest(sql`${organizationId}::uuid`, sql`${firing.priority}`)}
      from upserted
      ${countRepeats}
      returning type = 'created' and dispatched_at is null as waiting
    ),
    escalation as (${pendingEscalation(sql`select id, ${organizationId}::uuid as organization_id, ${check.configId}::uuid as config_id, ${firing.priority}::text as priority, created, (select escalates from config) as escalates, exists (select 1 from timeline where waiting) as waiting from upserted`)})
    select id, created, exists (select 1 from escalation) as escalates, exists (select 1 from timeline where waiting) as dispatches
    from upserted`.execute(db)
  return result.rows[0]
}

/**
 * `fireAlert` for many events in one statement (intake/fire-batcher.ts): the same writes, each
 * row conditioned on its own config, answered in the order given. No two events may share an
 * organization and fingerprint (an upsert cannot touch one row twice).
 */
export async function fireAlerts(
  database: Database,
  configs: EnabledConfigs,
  interest: DispatchInterest,
  batch: Array<{ check: ConfigCheck; firing: Firing }>,
  /** Given, the statement runs in this transaction. */
  trx?: Executor,
): Promise<Array<Fired | undefined>> {
  const rows = batch.map(({ check, firing }, ord) => ({
    ord,
    config_id: check.configId,
    organization_id: check.organizationId,
    api_key_hash: check.apiKeyHash,
    signing_secret: check.signingSecret,
    source: firing.source,
    title: firing.event.title,
    description: firing.event.description ?? null,
    priority: firing.priority,
    service: firing.event.service ?? null,
    fingerprint: firing.event.fingerprint,
    group_key: firing.event.groupKey ?? null,
    group_window_seconds: firing.groupWindowSeconds,
    started_at: firing.event.startedAt ?? null,
    runbook_url: firing.event.runbookUrl ?? null,
    source_url: firing.event.sourceUrl ?? null,
    labels: firing.event.labels,
  }))
  const text = fireAlertsText(database, configs, interest)
  const { rows: written } = await (trx ?? database.db).executeQuery<Fired & { ord: number }>(
    CompiledQuery.raw(text, [JSON.stringify(rows)]),
  )
  const answers: Array<Fired | undefined> = batch.map(() => undefined)
  for (const { ord, ...fired } of written) answers[ord] = fired
  return answers
}

/**
 * `fireAlerts`' statement. One parameter (the batch as JSON), so one text whatever the batch
 * size: kept prepared on each connection (planning it costs about a fifth of a batch of 25), and
 * compiled once per database rather than once per batch.
 */
const fireAlertsTexts = new WeakMap<Database, string>()
// One interest and one configs relation per database: the bus's subscribers register before the
// first alert is fired, and the relation is intake's constant.
function fireAlertsText(database: Database, configs: EnabledConfigs, interest: DispatchInterest): string {
  const kept = fireAlertsTexts.get(database)
  if (kept !== undefined) return kept
  const text = fireAlertsStatement(sql.val(''), configs, interest).compile(database.db).sql
  fireAlertsTexts.set(database, text)
  return text
}

const fireAlertsStatement = (batch: RawBuilder<unknown>, configs: EnabledConfigs, interest: DispatchInterest) => sql`${keptPrepared}
    with input as (
      select * from jsonb_to_recordset(${batch}::jsonb) as x(
        ord int, config_id uuid, organization_id uuid, api_key_hash text, signing_secret text, source text, title text,
        description text, priority text, service text, fingerprint text, group_key text, group_window_seconds int,
        started_at timestamptz, runbook_url text, source_url text, labels jsonb)
    ),
    valid as (
      select input.*, config.escalates from input
      join (${configs}) config on config.id = input.config_id and config.organization_id = input.organization_id
        and config.api_key_hash = input.api_key_hash and config.signing_secret is not distinct from input.signing_secret
    ),
    upserted as (
      insert into divinux.alerts (organization_id, config_id, source, title, description, priority, service, fingerprint, group_key, started_at,
        runbook_url, source_url, group_id, labels)
      select valid.organization_id, valid.config_id, valid.source, valid.title, valid.description, valid.priority, valid.service,
        valid.fingerprint, valid.group_key, least(valid.started_at, now()), valid.runbook_url, valid.source_url,
        (select first.id from divinux.alerts first
          where first.organization_id = valid.organization_id and first.group_key = valid.group_key and first.group_id is null
            and first.created_at > now() - make_interval(secs => valid.group_window_seconds)
          order by first.created_at limit 1),
        valid.labels
      from valid order by valid.ord
      on conflict (organization_id, fingerprint) where status <> 'resolved'
      do update set occurrences = divinux.alerts.occurrences + 1, last_seen_at = now(), updated_at = now()
      returning id, organization_id, fingerprint, xmax = 0 as created
    ),
    answered as (
      select valid.ord, valid.source, valid.title, valid.labels, valid.priority, valid.config_id, valid.escalates, upserted.id,
        upserted.organization_id, upserted.created
      from valid join upserted on upserted.organization_id = valid.organization_id and upserted.fingerprint = valid.fingerprint
    ),
    timeline as (
      insert into divinux.alert_events (organization_id, alert_id, type, data, last_occurred_at, dispatched_at)
      select organization_id, id, case when created then 'created' else 'occurred' end,
        jsonb_build_object('source', source, 'title', title, 'labels', labels),
        case when created then null else now() end,
        ${interest(sql`answered.organization_id`, sql`answered.priority`, sql`valid`)}
      from answered order by ord
      ${countRepeats}
      returning alert_id, type = 'created' and dispatched_at is null as waiting
    ),
    escalation as (${pendingEscalation(sql`select id, organization_id, config_id, priority, created, escalates,
      exists (select 1 from timeline where timeline.alert_id = answered.id and timeline.waiting) as waiting from answered`)})
    select ord, id, created, id in (select alert_id from escalation) as escalates,
      id in (select alert_id from timeline where waiting) as dispatches
    from answered`

/**
 * An acknowledge or resolve from the source: moves the unresolved alert with this fingerprint
 * (alerts/lifecycle.ts). `moved: false` when there was none; undefined when the config changed.
 */
export async function moveAlertFromSource(
  db: Executor,
  configs: EnabledConfigs,
  check: ConfigCheck,
  move: MoveTo & { fingerprint: string; source: string },
): Promise<{ id: string | null } | undefined> {
  const result = await sql<{ valid: boolean; id: string | null }>`
    with config as (${configStillValid(configs, check)}),
    ${moveExpressions({
      ...move,
      organizationId: check.organizationId,
      which: sql`fingerprint = ${move.fingerprint} and exists (select 1 from config)`,
      actorUserId: null,
      data: { source: move.source },
    })}
    select exists (select 1 from config) as valid, (select id from moved) as id`.execute(db)
  const row = result.rows[0]
  return row?.valid ? { id: row.id } : undefined
}
