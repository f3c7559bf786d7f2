import { sql, type RawBuilder } from 'kysely'
import type { Executor, Json } from '@svc/db'
import type { EscalationState } from './escalation-state.js'

/**
 * Every move of an alert's status, and what it does to the alert's escalation, whoever makes it:
 * a person (the API, an acknowledgement link, SMS, voice, Slack), the source (Alertmanager,
 * PagerDuty's events), a check that recovered, or the incident the alert is in. Each entry point
 * says which alerts and who; the statement is written here once (decision 0014, "Escalations").
 */
export type AlertMove = 'acknowledged' | 'resolved'

/** The statuses each move starts from (compare-and-set): a late acknowledgement never reopens a resolved alert. */
export const MOVES_FROM = {
  acknowledged: ['open'],
  resolved: ['open', 'acknowledged'],
} as const satisfies Record<AlertMove, ReadonlyArray<'open' | 'acknowledged'>>

/**
 * Which escalation states each move ends, the one rule:
 * - acknowledged: an escalation that pages or waits to (`pending`, `active`, `silenced`), and one
 *   whose steps all ran (`exhausted`); its policy's acknowledgement timeout pages again.
 * - resolved: every escalation that could still page (`acknowledged` ones through their timeout)
 *   or stood aside for another alert of its incident (`grouped`): nothing pages for a resolved alert.
 * `unrouted` stays as it is under both: it tells why nobody was paged.
 */
export const ESCALATION_ENDS = {
  acknowledged: ['pending', 'active', 'silenced', 'exhausted'],
  resolved: ['pending', 'active', 'silenced', 'acknowledged', 'exhausted', 'grouped'],
} as const satisfies Record<AlertMove, readonly EscalationState[]>

/**
 * When an escalation acknowledged now pages again, given the column holding its policy's id: the
 * policy's acknowledgement timeout from now, or never (null). Policies are oncall's, which hands
 * this over through its door (`ackTimeoutFromNow`), so every acknowledgement reads the policy as
 * it stands.
 */
export type AckTimeout = (policyId: RawBuilder<unknown>) => RawBuilder<Date | null>

/** A move, and for an acknowledgement when the escalation pages again. */
export type MoveTo = { to: 'resolved' } | { to: 'acknowledged'; ackTimeout: AckTimeout }

export type Move = MoveTo & {
  organizationId: string
  /** A condition on `divinux.alerts` naming the alerts to move (an id, a fingerprint, an incident's). */
  which: RawBuilder<unknown>
  /** The person who moved them; null for a source or a check. */
  actorUserId: string | null
  /** The timeline event's data: how, or from where (`{via: 'link'}`, `{source}`, `{incidentId}`). */
  data: Json
}

/**
 * The common table expressions of one move: `moved` (the alerts moved, compare-and-set on their
 * status), their timeline events (dispatched like any other) and the end of their escalations, in
 * the same statement, so a step that runs after it commits pages no one. A caller adds its own
 * guards to `which` and selects from `moved`.
 */
export function moveExpressions(move: Move): RawBuilder<unknown> {
  const { organizationId, to, actorUserId } = move
  const nextAt = move.to === 'acknowledged' ? move.ackTimeout(sql.ref('divinux.alert_escalations.policy_id')) : null
  const stamp =
    to === 'acknowledged'
      ? sql`acknowledged_at = now(), acknowledged_by = ${actorUserId}::uuid`
      : sql`resolved_at = now(), resolved_by = ${actorUserId}::uuid`
  return sql`
    moved as (
      update divinux.alerts set status = ${to}, ${stamp}, updated_at = now()
      where organization_id = ${organizationId} and status in (${sql.join(MOVES_FROM[to])}) and (${move.which})
      returning id
    ),
    moved_timeline as (
      insert into divinux.alert_events (organization_id, alert_id, type, data, actor_user_id)
      select ${organizationId}, id, ${to}, ${JSON.stringify(move.data)}::jsonb, ${actorUserId}::uuid from moved
    ),
    moved_escalations as (
      update divinux.alert_escalations set state = ${to}, updated_at = now(),
        next_at = ${nextAt}
      where alert_id in (select id from moved) and state in (${sql.join(ESCALATION_ENDS[to])})
    )`
}

/** Moves the alerts `which` names; answers the ids moved (none when each was past the move already). */
export async function moveAlerts(db: Executor, move: Move): Promise<string[]> {
  const moved = await sql<{ id: string }>`with ${moveExpressions(move)} select id from moved`.execute(db)
  return moved.rows.map((row) => row.id)
}

/** A person acknowledges or resolves one alert (the API, a link, SMS, voice, Slack); answers whether it moved. */
export async function moveAlertByPerson(
  db: Executor,
  alert: { organizationId: string; alertId: string },
  move: MoveTo,
  userId: string,
  data: Json = {},
): Promise<boolean> {
  const moved = await moveAlerts(db, {
    ...move,
    organizationId: alert.organizationId,
    which: sql`id = ${alert.alertId}`,
    actorUserId: userId,
    data,
  })
  return moved.length > 0
}

/**
 * An acknowledged alert open again, its acknowledgement and who gave it cleared, with its
 * `reopened` event (compare-and-set): its acknowledgement timed out or its incident's snooze
 * ended. Paging starts its escalation over. Answers whether it moved.
 */
export async function reopenAlert(db: Executor, alert: { organizationId: string; alertId: string }, reason: string): Promise<boolean> {
  const moved = await sql<{ id: string }>`
    with moved as (
      update divinux.alerts set status = 'open', acknowledged_at = null, acknowledged_by = null, updated_at = now()
      where organization_id = ${alert.organizationId} and id = ${alert.alertId} and status = 'acknowledged'
      returning id
    ),
    moved_timeline as (
      insert into divinux.alert_events (organization_id, alert_id, type, data)
      select ${alert.organizationId}, id, 'reopened', ${JSON.stringify({ reason })}::jsonb from moved
    )
    select id from moved`.execute(db)
  return moved.rows.length > 0
}
