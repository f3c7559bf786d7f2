import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import type { CheckStateChanged } from '@svc/events'
import { moveAlerts } from './lifecycle.js'
import type { DispatchInterest } from './event-bus.js'
import { countRepeats, urgent } from './fire.js'

/** The fingerprint of a synthetic check's alert: one unresolved alert per check. */
export const checkFingerprint = (checkId: string) => `check:${checkId}`

/**
 * Whether a newer verdict of the check already resolved its alert: an older `check.failed`
 * arriving after a `check.recovered` (a retried job) must not open the alert again.
 */
export async function resolvedSince(db: Executor, event: CheckStateChanged): Promise<boolean> {
  const result = await sql<{ found: boolean }>`
    select exists (
      select 1 from divinux.alerts alert
      join divinux.alert_events happened on happened.alert_id = alert.id and happened.type = 'resolved'
      where alert.organization_id = ${event.organizationId} and alert.fingerprint = ${checkFingerprint(event.checkId)}
        and (happened.data->>'checkAt')::timestamptz >= ${event.at}::timestamptz
    ) as found`.execute(db)
  return result.rows[0]?.found ?? false
}

/** Where the check fails and why, region by region: `eu-west (HTTP 503), us-east (timed out after 5000 ms)`. */
function failingIn(event: CheckStateChanged): string {
  if (event.failingRegions.length === 0) return 'its regions'
  const reasons = new Map((event.failures ?? []).map((failure) => [failure.region, failure.reason]))
  return event.failingRegions.map((region) => (reasons.has(region) ? `${region} (${reasons.get(region)})` : region)).join(', ')
}

/**
 * A failing check's alert, of the check's service (else named after the check): created with its
 * pending escalation (the check's policy, or none: the escalator routes it by its service's policy
 * or leaves it unrouted), or, while one is unresolved, counted as one more occurrence of it.
 */
export async function fireCheckAlert(
  db: Executor,
  interest: DispatchInterest,
  event: CheckStateChanged,
): Promise<{ id: string; created: boolean }> {
  const labels = { checkId: event.checkId, kind: event.kind, target: event.target, regions: event.failingRegions.join(',') }
  const title = `Check failing: ${event.name}`
  const description = `${event.target} is failing in ${failingIn(event)}`
  const result = await sql<{ id: string; created: boolean }>`
    with upserted as (
      insert into divinux.alerts (organization_id, source, title, description, priority, service, fingerprint, labels)
      values (${event.organizationId}, 'synthetics', ${title}, ${description}, ${event.priority}, ${event.service ?? event.name},
        ${checkFingerprint(event.checkId)}, ${JSON.stringify(labels)}::jsonb)
      on conflict (organization_id, fingerprint) where status <> 'resolved'
      do update set occurrences = divinux.alerts.occurrences + 1, last_seen_at = now(), updated_at = now()
      returning id, xmax = 0 as created
    ),
    timeline as (
      insert into divinux.alert_events (organization_id, alert_id, type, data, last_occurred_at, dispatched_at)
      select ${event.organizationId}, upserted.id, case when upserted.created then 'created' else 'occurred' end,
        ${JSON.stringify({ source: 'synthetics', title, labels })}::jsonb,
        case when upserted.created then null else now() end,
        ${interest(sql`${event.organizationId}::uuid`, sql`${event.priority}`)}
      from upserted
      ${countRepeats}
      returning type = 'created' and dispatched_at is null as waiting
    ),
    escalation as (
      insert into divinux.alert_escalations (alert_id, organization_id, policy_id, state, urgent, awaits_correlation)
      select id, ${event.organizationId}, ${event.escalationPolicyId}, 'pending', ${urgent(sql`${event.priority}::text`)},
        exists (select 1 from timeline where waiting)
      from upserted where created
    )
    select id, created from upserted`.execute(db)
  return result.rows[0]!
}

/** A recovered check resolves its alert (alerts/lifecycle.ts); answers the alert's id, if one was open. */
export async function resolveCheckAlert(db: Executor, event: CheckStateChanged): Promise<string | undefined> {
  const [id] = await moveAlerts(db, {
    organizationId: event.organizationId,
    to: 'resolved',
    which: sql`fingerprint = ${checkFingerprint(event.checkId)}`,
    actorUserId: null,
    data: { source: 'synthetics', checkAt: event.at, state: event.state },
  })
  return id
}
