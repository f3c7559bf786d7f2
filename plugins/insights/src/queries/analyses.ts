import { sql } from 'kysely'
import { type Executor, type Json, type Page, paged } from '@svc/db'

const analysisColumns = [
  'id',
  'organizationId',
  'sourceProduct',
  'incidentId',
  'trigger',
  'requestedBy',
  'status',
  'summary',
  'rootCause',
  'recommendations',
  'severity',
  'suspectedDeployId',
  'evidence',
  'findings',
  'subject',
  'provider',
  'model',
  'promptTokens',
  'completionTokens',
  'attempts',
  'error',
  'createdAt',
  'startedAt',
  'completedAt',
  'updatedAt',
] as const

export type AnalysisRow = NonNullable<Awaited<ReturnType<typeof findAnalysis>>>
export type AnalysisEventType = 'requested' | 'processing' | 'step' | 'retry_scheduled' | 'completed' | 'failed'
const ACTIVE = ['pending', 'processing']

export async function findAnalysis(db: Executor, organizationId: string, analysisId: string) {
  return db
    .selectFrom('divinux.analyses')
    .select(analysisColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', analysisId)
    .executeTakeFirst()
}

export interface IncidentKey {
  organizationId: string
  sourceProduct: 'alerting' | 'synthetics' | 'statuspages'
  incidentId: string
}

/**
 * The active statuses as literals, for the partial unique index's predicate in an ON CONFLICT:
 * PostgreSQL infers the arbiter index from that predicate, which a plan made without the
 * parameters' values (a generic plan, as a prepared statement may get) cannot.
 */
const ACTIVE_PREDICATE = ACTIVE.map((status) => sql.lit(status))

/** A new pending analysis, or undefined when the incident already has an active one (the partial unique index decides). */
export async function insertAnalysis(
  db: Executor,
  key: IncidentKey,
  trigger: 'automatic' | 'manual' | 'reinvestigation',
  requestedBy: string | null,
  subject: 'alert' | 'incident' | 'status_incident',
) {
  return db
    .insertInto('divinux.analyses')
    .values({ ...key, trigger, requestedBy, subject })
    .onConflict((oc) => oc.columns(['organizationId', 'sourceProduct', 'incidentId']).where('status', 'in', ACTIVE_PREDICATE).doNothing())
    .returning(analysisColumns)
    .executeTakeFirst()
}

export async function findActiveAnalysis(db: Executor, key: IncidentKey) {
  return db
    .selectFrom('divinux.analyses')
    .select('id')
    .where('organizationId', '=', key.organizationId)
    .where('sourceProduct', '=', key.sourceProduct)
    .where('incidentId', '=', key.incidentId)
    .where('status', 'in', ACTIVE)
    .executeTakeFirst()
}

/** Whether the incident was already analyzed automatically: the automatic trigger fires once per incident. */
export async function hasAutomaticAnalysis(db: Executor, key: IncidentKey): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.analyses')
    .select('id')
    .where('organizationId', '=', key.organizationId)
    .where('sourceProduct', '=', key.sourceProduct)
    .where('incidentId', '=', key.incidentId)
    .where('trigger', '=', 'automatic')
    .executeTakeFirst()
  return row !== undefined
}

export async function recordAnalysisEvent(
  db: Executor,
  organizationId: string,
  analysisId: string,
  type: AnalysisEventType,
  data: Json = {},
): Promise<void> {
  await db.insertInto('divinux.analysisEvents').values({ organizationId, analysisId, type, data }).execute()
}

export async function listAnalysisEvents(db: Executor, organizationId: string, analysisId: string) {
  return db
    .selectFrom('divinux.analysisEvents')
    .select(['id', 'type', 'data', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .where('analysisId', '=', analysisId)
    .orderBy('seq')
    .execute()
}

export interface AnalysisFilter {
  status?: string
  severity?: string
  sourceProduct?: string
  incidentId?: string
}

export async function listAnalyses(db: Executor, organizationId: string, filter: AnalysisFilter, page: Page) {
  let query = db.selectFrom('divinux.analyses').where('organizationId', '=', organizationId)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.severity) query = query.where('severity', '=', filter.severity)
  if (filter.sourceProduct) query = query.where('sourceProduct', '=', filter.sourceProduct)
  if (filter.incidentId) query = query.where('incidentId', '=', filter.incidentId)
  return paged(query, (rows) => rows.select(analysisColumns).orderBy('createdAt', 'desc').orderBy('id', 'desc'), page)
}

/** Takes a pending analysis (or one whose worker died while processing) for this attempt. */
export async function claimAnalysis(db: Executor, organizationId: string, analysisId: string) {
  return db
    .updateTable('divinux.analyses')
    .set({
      status: 'processing',
      attempts: sql<number>`attempts + 1`,
      startedAt: sql<Date>`coalesce(started_at, now())`,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', analysisId)
    .where('status', 'in', ACTIVE)
    .returning(analysisColumns)
    .executeTakeFirst()
}

export interface AnalysisOutcome {
  summary: string
  rootCause: string
  recommendations: string
  severity: string
  suspectedDeployId: string | null
  evidence: Json
  findings: Json
  subject: string
  provider: string
  model: string
  promptTokens: number
  completionTokens: number
}

export async function completeAnalysis(db: Executor, organizationId: string, analysisId: string, outcome: AnalysisOutcome) {
  return db
    .updateTable('divinux.analyses')
    .set({ ...outcome, status: 'completed', error: null, completedAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', analysisId)
    .where('status', '=', 'processing')
    .returning('id')
    .executeTakeFirst()
}

/** Back to pending until the job's next attempt, or failed for good; tokens spent on the attempt count either way. */
export async function setbackAnalysis(
  db: Executor,
  organizationId: string,
  analysisId: string,
  to: 'pending' | 'failed',
  error: string,
  tokens: { promptTokens: number; completionTokens: number },
) {
  return db
    .updateTable('divinux.analyses')
    .set({
      status: to,
      error,
      promptTokens: sql<number>`prompt_tokens + ${tokens.promptTokens}`,
      completionTokens: sql<number>`completion_tokens + ${tokens.completionTokens}`,
      completedAt: to === 'failed' ? sql<Date>`now()` : null,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', analysisId)
    .where('status', '=', 'processing')
    .returning('id')
    .executeTakeFirst()
}

export interface AnalysisStatistics {
  byStatus: Array<{ key: string; count: number }>
  bySeverity: Array<{ key: string; count: number }>
  meanSecondsToCompletion: number | null
  promptTokens: number
  completionTokens: number
}

export async function analysisStatistics(
  db: Executor,
  organizationId: string,
  range: { from?: string; to?: string },
): Promise<AnalysisStatistics> {
  let scope = db.selectFrom('divinux.analyses').where('organizationId', '=', organizationId)
  if (range.from) scope = scope.where('createdAt', '>=', new Date(range.from))
  if (range.to) scope = scope.where('createdAt', '<', new Date(range.to))
  const [byStatus, bySeverity, totals] = await Promise.all([
    scope
      .select(['status as key', (eb) => eb.fn.countAll<number>().as('count')])
      .groupBy('status')
      .orderBy('status')
      .execute(),
    scope
      .select(['severity as key', (eb) => eb.fn.countAll<number>().as('count')])
      .where('severity', 'is not', null)
      .groupBy('severity')
      .orderBy('severity')
      .execute(),
    scope
      .select([
        sql<number | null>`avg(extract(epoch from completed_at - created_at)) filter (where status = 'completed')`.as('meanSeconds'),
        sql<number>`coalesce(sum(prompt_tokens), 0)`.as('promptTokens'),
        sql<number>`coalesce(sum(completion_tokens), 0)`.as('completionTokens'),
      ])
      .executeTakeFirstOrThrow(),
  ])
  const count = (rows: Array<{ key: string | null; count: number }>) =>
    rows.map((row) => ({ key: row.key ?? '', count: Number(row.count) }))
  return {
    byStatus: count(byStatus),
    bySeverity: count(bySeverity),
    meanSecondsToCompletion: totals.meanSeconds === null ? null : Math.round(Number(totals.meanSeconds) * 1000) / 1000,
    promptTokens: Number(totals.promptTokens),
    completionTokens: Number(totals.completionTokens),
  }
}

/** The organization's analyses waiting or running: how far back its next one queues. */
export async function countActiveAnalyses(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('divinux.analyses')
    .select((eb) => eb.fn.countAll<number>().as('active'))
    .where('organizationId', '=', organizationId)
    .where('status', 'in', ['pending', 'processing'])
    .executeTakeFirstOrThrow()
  return Number(row.active)
}
