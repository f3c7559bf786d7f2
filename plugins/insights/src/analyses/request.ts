import type { AiConfig } from '@svc/config'
import type { Database } from '@svc/db'
import { inTransaction } from '@svc/jobs'
import type { JobQueue } from '@svc/jobs'
import {
  countActiveAnalyses,
  findActiveAnalysis,
  hasAutomaticAnalysis,
  insertAnalysis,
  recordAnalysisEvent,
  type AnalysisRow,
  type IncidentKey,
} from '../queries/analyses.js'
import { findBudget, periodOf, recordAnalysisSkipped } from '../queries/usage.js'
import { effectiveLimits, limitReachedNow, noteThresholds, type LimitName } from '../usage/budget.js'
import { ANALYZE_QUEUE, type AnalyzeJob } from './queue.js'

export type AnalysisRequest =
  | { outcome: 'requested'; analysis: AnalysisRow }
  | { outcome: 'already_active'; analysisId: string | null }
  | { outcome: 'already_analyzed' }
  | { outcome: 'budget_exceeded'; limit: LimitName }

/**
 * Asks for an analysis of an incident: checks the budget, creates the pending analysis with its
 * first event, and queues its job, all in one transaction, so an analysis exists exactly when
 * its job does. The budget row is locked meanwhile: concurrent requests cannot both take the
 * last analysis of the period. An automatic request the budget refuses is recorded as skipped.
 */
export async function requestAnalysis(
  database: Database,
  jobs: JobQueue,
  ai: AiConfig,
  key: IncidentKey,
  request: {
    trigger: 'automatic' | 'manual' | 'reinvestigation'
    requestedBy: string | null
    subject?: 'alert' | 'incident' | 'status_incident'
  },
): Promise<AnalysisRequest> {
  return database.db.transaction().execute(async (trx): Promise<AnalysisRequest> => {
    // An event delivered twice must not analyze its incident twice.
    if (request.trigger === 'automatic' && (await hasAutomaticAnalysis(trx, key))) return { outcome: 'already_analyzed' }
    const limit = await limitReachedNow(trx, ai, key.organizationId)
    if (limit) {
      // What no person asked for is recorded as skipped, for the usage page.
      if (request.trigger !== 'manual') {
        await recordAnalysisSkipped(trx, key.organizationId, periodOf(new Date()), {
          reason: 'budget_exceeded',
          limit,
          sourceProduct: key.sourceProduct,
          incidentId: key.incidentId,
        })
      }
      return { outcome: 'budget_exceeded', limit }
    }
    const subject = request.subject ?? (key.sourceProduct === 'statuspages' ? 'status_incident' : 'alert')
    const analysis = await insertAnalysis(trx, key, request.trigger, request.requestedBy, subject)
    if (!analysis) {
      const active = await findActiveAnalysis(trx, key)
      // The active one finished between the insert and this read: the caller may simply ask again.
      return { outcome: 'already_active', analysisId: active?.id ?? null }
    }
    await recordAnalysisEvent(trx, key.organizationId, analysis.id, 'requested', {
      trigger: request.trigger,
      requestedBy: request.requestedBy,
    })
    const job: AnalyzeJob = { organizationId: key.organizationId, analysisId: analysis.id }
    // Fair queueing: each analysis an organization already has waiting lowers the priority of its
    // next one, so a flood from one organization queues behind the first analysis of any other.
    const waiting = await countActiveAnalyses(trx, key.organizationId)
    await jobs.send(ANALYZE_QUEUE, job, { db: inTransaction(trx), singletonKey: analysis.id, priority: -Math.max(0, waiting - 1) })
    await noteThresholds(trx, key.organizationId, effectiveLimits(await findBudget(trx, key.organizationId), ai))
    return { outcome: 'requested', analysis }
  })
}
