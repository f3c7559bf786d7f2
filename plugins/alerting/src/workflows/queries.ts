import { sql } from 'kysely'
import { jsonb, jsonColumn, paged, type Executor, type Page } from '@svc/db'
import type { Action, ActionOutcome, Condition, ConditionOutcome, Trigger } from './schemas.js'

/** A workflow's stored conditions and actions, as the validated body wrote them. */
export const storedConditions = jsonColumn<Condition[]>()
export const storedActions = jsonColumn<Action[]>()
/** What a run recorded of each condition and action, as the runner wrote it. */
export const storedConditionOutcomes = jsonColumn<ConditionOutcome[]>()
export const storedActionOutcomes = jsonColumn<ActionOutcome[]>()

const workflowColumns = [
  'id',
  'name',
  'description',
  'trigger',
  'conditions',
  'actions',
  'enabled',
  'oncePerIncident',
  'delayMinutes',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

function workflowsOf(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.workflows').where('organizationId', '=', organizationId)
}

/** Workflows by name (then id), optionally of one trigger. */
export async function listWorkflows(db: Executor, organizationId: string, trigger: Trigger | undefined, page: Page) {
  const base = trigger ? workflowsOf(db, organizationId).where('trigger', '=', trigger) : workflowsOf(db, organizationId)
  return paged(
    base,
    (rows) =>
      rows
        .select(workflowColumns)
        .orderBy(sql`lower(name)`)
        .orderBy('id'),
    page,
  )
}

export async function findWorkflow(db: Executor, organizationId: string, workflowId: string, forUpdate = false) {
  const query = workflowsOf(db, organizationId).select(workflowColumns).where('id', '=', workflowId)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type WorkflowRow = NonNullable<Awaited<ReturnType<typeof findWorkflow>>>

export async function workflowNameTaken(db: Executor, organizationId: string, name: string, exceptId?: string) {
  let query = workflowsOf(db, organizationId)
    .select('id')
    .where(sql`lower(name)`, '=', name.toLowerCase())
  if (exceptId) query = query.where('id', '<>', exceptId)
  return (await query.executeTakeFirst()) !== undefined
}

export interface WorkflowValues {
  name: string
  description: string | null
  trigger: Trigger
  conditions: Condition[]
  actions: Action[]
  enabled: boolean
  oncePerIncident: boolean
  delayMinutes: number
}

export async function insertWorkflow(db: Executor, workflow: WorkflowValues & { organizationId: string; createdBy: string }) {
  return db
    .insertInto('divinux.workflows')
    .values({ ...workflow, conditions: jsonb(workflow.conditions), actions: jsonb(workflow.actions) })
    .returning(workflowColumns)
    .executeTakeFirstOrThrow()
}

export async function updateWorkflow(db: Executor, organizationId: string, workflowId: string, change: Partial<WorkflowValues>) {
  const { conditions, actions, ...rest } = change
  return db
    .updateTable('divinux.workflows')
    .set({
      ...rest,
      ...(conditions ? { conditions: jsonb(conditions) } : {}),
      ...(actions ? { actions: jsonb(actions) } : {}),
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', workflowId)
    .returning(workflowColumns)
    .executeTakeFirstOrThrow()
}

export async function deleteWorkflow(db: Executor, organizationId: string, workflowId: string) {
  await db.deleteFrom('divinux.workflows').where('organizationId', '=', organizationId).where('id', '=', workflowId).execute()
}

/** The enabled workflows of a trigger, oldest first: the order their runs are queued in. */
export async function enabledWorkflows(db: Executor, organizationId: string, trigger: Trigger) {
  return workflowsOf(db, organizationId)
    .select(['id', 'delayMinutes'])
    .where('trigger', '=', trigger)
    .where('enabled', '=', true)
    .orderBy('createdAt')
    .orderBy('id')
    .execute()
}

/**
 * Queues one run per workflow for an event, a delayed workflow's starting its delay after the
 * event; a run that exists for the workflow and event (a redelivered event) is left alone.
 * Answers the new runs with when each starts (null: at once).
 */
export async function insertRuns(
  db: Executor,
  organizationId: string,
  workflows: Array<{ id: string; delayMinutes: number }>,
  event: { trigger: Trigger; eventKey: string; alertId?: string; deployEventId?: string; incidentId?: string; occurredAt: Date },
) {
  if (workflows.length === 0) return []
  return db
    .insertInto('divinux.workflowRuns')
    .values(
      workflows.map(({ id: workflowId, delayMinutes }) => ({
        workflowId,
        startsAt: delayMinutes > 0 ? new Date(event.occurredAt.getTime() + delayMinutes * 60_000) : null,
        organizationId,
        trigger: event.trigger,
        eventKey: event.eventKey,
        alertId: event.alertId ?? null,
        deployEventId: event.deployEventId ?? null,
        incidentId: event.incidentId ?? null,
        occurredAt: event.occurredAt,
      })),
    )
    .onConflict((oc) => oc.columns(['workflowId', 'eventKey']).doNothing())
    .returning(['id', 'startsAt'])
    .execute()
}

const runColumns = [
  'id',
  'workflowId',
  'organizationId',
  'trigger',
  'eventKey',
  'alertId',
  'deployEventId',
  'incidentId',
  'status',
  'definition',
  'conditions',
  'actions',
  'occurredAt',
  'createdAt',
  'startsAt',
  'finishedAt',
] as const

/** A run for its job, locked until the caller's transaction ends. */
export async function takeRun(db: Executor, runId: string) {
  return db.selectFrom('divinux.workflowRuns').select(runColumns).where('id', '=', runId).forUpdate().executeTakeFirst()
}

export type RunRow = NonNullable<Awaited<ReturnType<typeof takeRun>>>

export async function listRuns(db: Executor, organizationId: string, workflowId: string, status: string | undefined, page: Page) {
  let base = db.selectFrom('divinux.workflowRuns').where('organizationId', '=', organizationId).where('workflowId', '=', workflowId)
  if (status) base = base.where('status', '=', status)
  return paged(base, (rows) => rows.select(runColumns).orderBy('createdAt', 'desc').orderBy('id'), page)
}

/** Records the evaluated conditions and the definition the run follows. */
export async function startRun(
  db: Executor,
  runId: string,
  run: { definition: { conditions: Condition[]; actions: Action[] }; conditions: ConditionOutcome[]; matched: boolean },
) {
  await db
    .updateTable('divinux.workflowRuns')
    .set({
      status: run.matched ? 'running' : 'not_matched',
      definition: jsonb(run.definition),
      conditions: jsonb(run.conditions),
      ...(run.matched ? {} : { finishedAt: sql<Date>`now()` }),
    })
    .where('id', '=', runId)
    .execute()
}

export async function recordActionOutcomes(db: Executor, runId: string, outcomes: ActionOutcome[]) {
  await db
    .updateTable('divinux.workflowRuns')
    .set({ actions: jsonb(outcomes) })
    .where('id', '=', runId)
    .execute()
}

/** Ends a run whose actions all ran: failed when any of them failed, else succeeded. */
export async function finishRun(db: Executor, runId: string) {
  await db
    .updateTable('divinux.workflowRuns')
    .set({
      status: sql<string>`case when actions @> '[{"status": "failed"}]'::jsonb then 'failed' else 'succeeded' end`,
      finishedAt: sql<Date>`now()`,
    })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .execute()
}

/** Whether the workflow acted on the incident already (a run other than `runId` got past its conditions). */
export async function ranForIncident(db: Executor, organizationId: string, workflowId: string, incidentId: string, runId: string) {
  const row = await db
    .selectFrom('divinux.workflowRuns')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('workflowId', '=', workflowId)
    .where('incidentId', '=', incidentId)
    .where('id', '<>', runId)
    .where('status', 'in', ['running', 'succeeded', 'failed'])
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}
