import { trackProductEvent } from '@svc/analytics'
import type { FastifyBaseLogger } from 'fastify'
import { AnalyzerError, type IncidentAnalyzer } from '@svc/ai'
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
import { investigate, proseOf, type Investigation } from '../investigation/investigate.js'
import { subjectOf } from '../investigation/subject.js'
import { runAgents } from '../agents/run-agents.js'
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

/** How much of a step's reasoning text an analysis event keeps. */
const MAX_REASONING = 2_000

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

  let result: Investigation
  try {
    result = await analyze(deps, analysis, attemptNumber)
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
    const { suspectDescription: _, ...prose } = proseOf(result)
    const completed = await completeAnalysis(trx, job.organizationId, analysis.id, {
      ...prose,
      findings: result.findings as unknown as Json,
      subject: result.subject.kind,
      evidence: result.gathered as unknown as Json,
      provider: result.usage.provider,
      model: result.usage.model,
      ...usage,
    })
    if (!completed) return false
    await runAgents(trx, job.organizationId, analysis.id, result)
    await recordAnalysisEvent(trx, job.organizationId, analysis.id, 'completed', {
      attempt: attemptNumber,
      provider: result.usage.provider,
      model: result.usage.model,
      severity: result.findings.severity,
      suspectedDeployId: prose.suspectedDeployId,
      category: result.findings.probableCause.category,
      ...usage,
    })
    await trackProductEvent(trx, {
      organizationId: job.organizationId,
      name: 'Analysis Completed',
      userId: null,
      properties: {
        analysisId: analysis.id,
        subject: result.subject.kind,
        category: result.findings.probableCause.category,
        model: result.usage.model,
      },
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

async function analyze(deps: AnalysisWorkerDependencies, analysis: AnalysisRow, attempt: number): Promise<Investigation> {
  const { db } = deps.database
  const key = {
    organizationId: analysis.organizationId,
    sourceProduct: analysis.sourceProduct,
    incidentId: analysis.incidentId,
  } as IncidentKey
  const subject = await subjectOf(db, key)
  if (!subject) throw new AnalyzerError('the incident no longer exists', false)
  const guard = createSpendGuard(deps.database, deps.ai, { organizationId: analysis.organizationId, referenceId: analysis.id })
  let step = 0
  return investigate(db, deps.ai, subject, analysis.organizationId, {
    guard,
    // Each step is recorded as it happens, so an investigation that fails still shows how far it got.
    onStep: async ({ tool, input, output, reasoning }) => {
      step += 1
      await recordAnalysisEvent(db, analysis.organizationId, analysis.id, 'step', {
        attempt,
        step,
        tool,
        input: input as Json,
        output: output as Json,
        reasoning: reasoning === null ? null : reasoning.slice(0, MAX_REASONING),
      })
    },
  })
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
