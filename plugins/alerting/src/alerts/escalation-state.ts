import { sql, type SelectQueryBuilder } from 'kysely'
import { jsonb, type Executor, type Json } from '@svc/db'

export const ESCALATION_STATES = ['pending', 'active', 'silenced', 'unrouted', 'acknowledged', 'resolved', 'exhausted', 'grouped'] as const
export type EscalationState = (typeof ESCALATION_STATES)[number]

/**
 * Acknowledged escalations whose time to page again has come (an acknowledgement timeout, an
 * incident's snooze), oldest first, locked and skipped by other replicas until the caller's
 * transaction ends.
 */
/** Whether `claimDueRepages` would find one now, as the job census asks it (decision 0033, "Tables"). */
export const REPAGE_DUE_EXISTS = `exists (select 1 from divinux.alert_escalations
  where state = 'acknowledged' and next_at <= now())`

export async function claimDueRepages(db: Executor, limit: number) {
  return db
    .selectFrom('divinux.alertEscalations as e')
    .innerJoin('divinux.alerts as a', 'a.id', 'e.alertId')
    .select(['e.alertId', 'e.organizationId', 'e.policyId', 'a.status'])
    .where('e.state', '=', 'acknowledged')
    .where('e.nextAt', '<=', sql<Date>`now()`)
    .orderBy('e.nextAt')
    .limit(limit)
    .forUpdate('e')
    .skipLocked()
    .execute()
}

/** What a transaction changes in an escalation: its state and next time, and what else it names. */
export interface EscalationChange {
  state: EscalationState
  policyId?: string | null
  round?: number
  step?: number
  nextAt: Date | null
  note?: string | null
  silenceId?: string | null
}

export async function setEscalation(db: Executor, alertId: string, change: EscalationChange) {
  await db
    .updateTable('divinux.alertEscalations')
    .set({ ...change, updatedAt: sql<Date>`now()` })
    .where('alertId', '=', alertId)
    .execute()
}

/**
 * `setEscalation` for several escalations in one statement. A field a change leaves out keeps its
 * value, as `setEscalation` leaves it.
 */
export async function setEscalations(db: Executor, changes: ReadonlyArray<{ alertId: string; change: EscalationChange }>) {
  if (changes.length === 0) return
  const given = (field: keyof EscalationChange, cast: string, column: string) =>
    sql.raw(`case when c.change ? '${field}' then (c.change->>'${field}')::${cast} else e.${column} end`)
  // `= any` lets the planner read the rows by key: it takes a recordset for 100 rows, and would
  // hash a scan of every escalation otherwise.
  await sql`
    update divinux.alert_escalations e
    set state = c.change->>'state',
      next_at = (c.change->>'nextAt')::timestamptz,
      policy_id = ${given('policyId', 'uuid', 'policy_id')},
      silence_id = ${given('silenceId', 'uuid', 'silence_id')},
      round = ${given('round', 'int', 'round')},
      step = ${given('step', 'int', 'step')},
      note = ${given('note', 'text', 'note')},
      updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(changes)}::jsonb) as c("alertId" uuid, change jsonb)
    where e.alert_id = c."alertId" and e.alert_id = any(${changes.map((change) => change.alertId)}::uuid[])`.execute(db)
}

/**
 * Takes the escalation's turn at this position (compare-and-set, row-locked until the caller's
 * transaction ends): undefined when it moved on, was acknowledged or resolved meanwhile, or
 * another replica took the turn first.
 */
export async function claimStep(db: Executor, position: { alertId: string; round: number; step: number }) {
  return db
    .updateTable('divinux.alertEscalations')
    .set({ updatedAt: sql<Date>`now()` })
    .where('alertId', '=', position.alertId)
    .where('state', '=', 'active')
    .where('round', '=', position.round)
    .where('step', '=', position.step)
    .returning(['organizationId', 'policyId'])
    .executeTakeFirst()
}

export async function findEscalation(db: Executor, organizationId: string, alertId: string) {
  return db
    .selectFrom('divinux.alertEscalations')
    .select(['policyId', 'state', 'round', 'step', 'nextAt', 'note', 'createdAt', 'updatedAt'])
    .where('organizationId', '=', organizationId)
    .where('alertId', '=', alertId)
    .executeTakeFirst()
}

/** Timeline entries of many alerts in one statement, in the order given. */
export async function insertAlertEvents(
  db: Executor,
  events: Array<{ organizationId: string; alertId: string; type: string; data: Json }>,
): Promise<void> {
  if (events.length === 0) return
  // One statement's rows may read the same clock: a microsecond apart each, the timeline keeps their order.
  const rows = events.map((event, index) => ({
    ...event,
    data: jsonb(event.data),
    createdAt: sql<Date>`clock_timestamp() + make_interval(secs => ${index / 1_000_000})`,
  }))
  await db.insertInto('divinux.alertEvents').values(rows).execute()
}

/** The escalations a silence holds, with what matching another silence needs; locked for the caller. */
export async function heldBySilence(db: Executor, silenceId: string) {
  return db
    .selectFrom('divinux.alertEscalations as e')
    .innerJoin('divinux.alerts as a', 'a.id', 'e.alertId')
    .select(['e.alertId', 'e.organizationId', 'e.policyId', 'a.status', 'a.priority', 'a.service', 'a.labels'])
    .where('e.state', '=', 'silenced')
    .where('e.silenceId', '=', silenceId)
    .forUpdate('e')
    .skipLocked()
    .execute()
}

/** The escalation row of an alert, locked; written (not started) when the alert has none. */
export async function lockOrCreateEscalation(db: Executor, alert: { id: string; organizationId: string; configId: string | null }) {
  await db
    .insertInto('divinux.alertEscalations')
    .values({
      alertId: alert.id,
      organizationId: alert.organizationId,
      configId: alert.configId,
      state: 'unrouted',
      awaitsCorrelation: false,
    })
    .onConflict((oc) => oc.column('alertId').doNothing())
    .execute()
  return db.selectFrom('divinux.alertEscalations').select(['state']).where('alertId', '=', alert.id).forUpdate().executeTakeFirstOrThrow()
}

/**
 * The alerts whose escalation is in one of `states` (by default: waits for its next step), as a
 * subquery a caller filters by (`where alertId in …`).
 */
export function alertsEscalating(db: Executor, states: readonly EscalationState[] = ['active']) {
  return db.selectFrom('divinux.alertEscalations').select('alertId').where('state', 'in', states)
}

/**
 * Pages these alerts again at `until` where they are acknowledged under a policy (an incident's
 * snooze: `alertIds` is the incident's alerts, a subquery); answers how many.
 */
export async function repageAcknowledgedAt<D, T extends keyof D>(
  db: Executor,
  organizationId: string,
  alertIds: SelectQueryBuilder<D, T, { alertId: string }>,
  until: Date,
): Promise<number> {
  const snoozed = await db
    .updateTable('divinux.alertEscalations')
    .set({ nextAt: until, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('alertId', 'in', alertIds)
    .where('state', '=', 'acknowledged')
    .where('policyId', 'is not', null)
    .returning('alertId')
    .execute()
  return snoozed.length
}

/**
 * Escalations written with their alerts and not started yet, those of P1 and P2 alerts first,
 * then oldest first, with what routing needs of the alert; locked and skipped by other replicas
 * until the caller's transaction ends.
 * One waits while its alert is to be correlated (`awaits_correlation`, cleared by the event
 * dispatcher as it correlates the alert), so correlation has put the alert in its incident first
 * (a storm pages once per incident); given `correlationWaitSeconds` (the dispatcher has stalled),
 * at most that long. The ones waiting for nothing are read in the order of their own index, so a
 * claim costs the same behind a backlog of thousands.
 */
/**
 * Whether `claimPendingEscalations` could find one now, as the job census asks it (decision 0033,
 * "Tables"): one ready, or one that has waited `correlationWaitSeconds` for its correlation (taken
 * only while the dispatcher is stalled; its starter then finds nothing, as it did polling).
 */
export function pendingEscalationExists(correlationWaitSeconds: number): string {
  return `(exists (select 1 from divinux.alert_escalations where state = 'pending' and not awaits_correlation)
    or exists (select 1 from divinux.alert_escalations where state = 'pending'
      and created_at <= now() - make_interval(secs => ${Math.trunc(correlationWaitSeconds)})))`
}

export async function claimPendingEscalations(db: Executor, limit: number, correlationWaitSeconds?: number) {
  return (
    db
      .selectFrom('divinux.alertEscalations as e')
      .innerJoin('divinux.alerts as a', 'a.id', 'e.alertId')
      // An alert of no config (a synthetic check's) carries its policy on its pending row.
      .select(['e.alertId', 'e.organizationId', 'e.configId', 'e.policyId', 'a.status', 'a.priority', 'a.service', 'a.labels'])
      .where('e.state', '=', 'pending')
      .where((eb) =>
        correlationWaitSeconds === undefined
          ? eb('e.awaitsCorrelation', '=', false)
          : eb.or([
              eb('e.awaitsCorrelation', '=', false),
              eb('e.createdAt', '<=', sql<Date>`now() - make_interval(secs => ${correlationWaitSeconds})`),
            ]),
      )
      // P1 and P2 alerts first: in a flood of thousands of escalations, a P1's page does not wait
      // behind the P3s and P4s fired before it (they wait instead, until the urgent ones are started).
      .orderBy('e.urgent', 'desc')
      .orderBy('e.createdAt')
      .limit(limit)
      .forUpdate('e')
      .skipLocked()
      .execute()
  )
}

/** The dispatcher correlated these alerts, in the caller's transaction: their escalations may start. */
export async function escalationsCorrelated(db: Executor, alertIds: readonly string[]): Promise<void> {
  if (alertIds.length === 0) return
  await db
    .updateTable('divinux.alertEscalations')
    .set({ awaitsCorrelation: false })
    .where('alertId', 'in', alertIds)
    .where('awaitsCorrelation', '=', true)
    .execute()
}
