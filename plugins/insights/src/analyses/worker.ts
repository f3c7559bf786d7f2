import type { FastifyBaseLogger } from 'fastify'
import { AnalyzerError, type IncidentAnalysis, type IncidentAnalyzer } from '@svc/ai'
import type { AiConfig } from '@svc/config'
import type { Database, Json } from '@svc/db'
import { publish, type IncidentReference } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import {
  claimAnalysis,
  completeAnalysis,
  recordAnalysisEvent,
  setbackAnalysis,
  type AnalysisRow,
  type IncidentKey,
} from '../queries/analyses.js'
import { deploysBeforeIncident, incidentContext, incidentTimeline, similarResolvedIncidents } from '../queries/evidence.js'
import { releaseReservations } from '../queries/usage.js'
import { recordSpend } from '../usage/budget.js'
import { createSpendGuard } from '../usage/spend-guard.js'
import type { AnalyzeJob } from './queue.js'
import { analysesFinished } from '@svc/metrics'

export interface AnalysisWorkerDependencies {
  database: Database
  /** Announces a completed analysis (`analysis.completed`) in its transaction. */
  jobs: JobQueue
  analyzer: IncidentAnalyzer
  ai: AiConfig
  log: FastifyBaseLogger
}

/** The attempt the job is on, as pg-boss counts: retryCount of retryLimit. */
export interface Attempt {
  retryCount: number
  retryLimit: number
}

function bulletList(items: string[]): string {
  return items.map((item) => `- ${item}`).join('\n')
}

/**
 * One attempt at an analysis job: pending → processing → completed, or back to pending for
 * the job's next retry, or failed when the error cannot get better or the retries are spent.
 * Idempotent: a job delivered again for a finished analysis does nothing.
 */
export async function processAnalysisJob(deps: AnalysisWorkerDependencies, job: AnalyzeJob, attempt: Attempt): Promise<void> {
  const { db } = deps.database
  const analysis = await claimAnalysis(db, job.organizationId, job.analysisId)
  if (!analysis) return
  const attemptNumber = attempt.retryCount + 1
  await recordAnalysisEvent(db, job.organizationId, analysis.id, 'processing', { attempt: attemptNumber })

  let result: IncidentAnalysis
  try {
    result = await analyze(deps, analysis)
  } catch (error) {
    const failure =
      error instanceof AnalyzerError ? error : new AnalyzerError(`the analysis failed: ${(error as Error).message}`, true, { cause: error })
    const retriesLeft = attempt.retryLimit - attempt.retryCount
    const retrying = failure.retryable && retriesLeft > 0
    await recordSetback(deps, analysis, failure, retrying ? 'pending' : 'failed', attemptNumber)
    deps.log.warn({ analysisId: analysis.id, attempt: attemptNumber, retrying, err: failure }, 'analysis attempt failed')
    // Throwing hands the job back to pg-boss, which retries it after its backoff.
    if (retrying) throw failure
    return
  }

  const usage = { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens }
  const completed = await db.transaction().execute(async (trx) => {
    const completed = await completeAnalysis(trx, job.organizationId, analysis.id, {
      summary: result.summary,
      rootCause: result.rootCause,
      recommendations: bulletList(result.recommendations),
      severity: result.severity,
      suspectedDeployId: result.suspectedDeployId,
      evidence: result.evidence as unknown as Json,
      provider: result.usage.provider,
      model: result.usage.model,
      ...usage,
    })
    if (!completed) return false
    await recordAnalysisEvent(trx, job.organizationId, analysis.id, 'completed', {
      attempt: attemptNumber,
      provider: result.usage.provider,
      model: result.usage.model,
      severity: result.severity,
      suspectedDeployId: result.suspectedDeployId,
      ...usage,
    })
    await recordSpend(trx, deps.ai, {
      organizationId: job.organizationId,
      feature: 'analysis',
      referenceId: analysis.id,
      usage: result.usage,
    })
    // Alerting posts it to the chats that were paged about the incident.
    await publish(deps.jobs, trx, 'analysis.completed', {
      organizationId: job.organizationId,
      analysisId: analysis.id,
      incident: { sourceProduct: analysis.sourceProduct as IncidentReference['sourceProduct'], incidentId: analysis.incidentId },
    })
    return true
  })
  if (completed) analysesFinished.inc({ outcome: 'completed' })
}

async function analyze(deps: AnalysisWorkerDependencies, analysis: AnalysisRow): Promise<IncidentAnalysis> {
  const { db } = deps.database
  const key = {
    organizationId: analysis.organizationId,
    sourceProduct: analysis.sourceProduct,
    incidentId: analysis.incidentId,
  } as IncidentKey
  const incident = await incidentContext(db, key)
  if (!incident) throw new AnalyzerError('the incident no longer exists', false)
  const guard = createSpendGuard(deps.database, deps.ai, { organizationId: analysis.organizationId, referenceId: analysis.id })
  return deps.analyzer.analyzeIncident(
    incident,
    {
      recentDeploys: () => deploysBeforeIncident(db, key.organizationId, incident),
      similarIncidents: () => similarResolvedIncidents(db, key.organizationId, incident),
      timeline: () => incidentTimeline(db, key.organizationId, incident),
    },
    guard,
  )
}

async function recordSetback(
  deps: AnalysisWorkerDependencies,
  analysis: AnalysisRow,
  failure: AnalyzerError,
  to: 'pending' | 'failed',
  attempt: number,
): Promise<void> {
  const usage = failure.usage ?? { provider: deps.analyzer.provider, model: 'unknown', promptTokens: 0, completionTokens: 0 }
  const tokens = { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens }
  const moved = await deps.database.db.transaction().execute(async (trx) => {
    const moved = await setbackAnalysis(trx, analysis.organizationId, analysis.id, to, failure.message, tokens)
    if (!moved) return false
    await recordAnalysisEvent(trx, analysis.organizationId, analysis.id, to === 'pending' ? 'retry_scheduled' : 'failed', {
      attempt,
      error: failure.message,
      retryable: failure.retryable,
    })
    // A failed attempt's tokens were still spent at the provider: they count against the budget.
    if (tokens.promptTokens + tokens.completionTokens > 0) {
      await recordSpend(trx, deps.ai, { organizationId: analysis.organizationId, feature: 'analysis', referenceId: analysis.id, usage })
    } else {
      await releaseReservations(trx, analysis.organizationId, analysis.id)
    }
    return true
  })
  if (moved) analysesFinished.inc({ outcome: to === 'pending' ? 'retry_scheduled' : 'failed' })
}
