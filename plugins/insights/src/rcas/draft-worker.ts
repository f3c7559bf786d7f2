import type { FastifyBaseLogger } from 'fastify'
import { AnalyzerError, type IncidentAnalyzer, type RcaDraft } from '@svc/ai'
import type { AiConfig } from '@svc/config'
import type { Database } from '@svc/db'
import { claimDraft, listLinks, saveDraft, setbackDraft } from '../queries/rcas.js'
import { releaseReservations } from '../queries/usage.js'
import { createSpendGuard } from '../usage/spend-guard.js'
import { recordSpend } from '../usage/budget.js'
import { draftContext, NOTHING_LINKED } from './draft-context.js'

/** Why a draft fails when every incident it links is gone (past retention, deleted). */
const GONE = 'the incidents linked to this RCA are gone (past retention or deleted): link one that exists, then generate the draft'

/** The RCA draft jobs: one per request, `{ organizationId, rcaId }`. */
export const DRAFT_QUEUE = 'insights.draft-rca'

export interface DraftJob {
  organizationId: string
  rcaId: string
}

export interface DraftWorkerDependencies {
  database: Database
  analyzer: IncidentAnalyzer
  ai: AiConfig
  log: FastifyBaseLogger
}

/**
 * One attempt at an RCA draft: queued → running → completed, back to queued for the job's next
 * retry, or failed. Tokens are recorded against the budget whether or not the attempt succeeded.
 */
export async function processDraftJob(
  deps: DraftWorkerDependencies,
  job: DraftJob,
  attempt: { retryCount: number; retryLimit: number },
): Promise<void> {
  const { db } = deps.database
  const rca = await claimDraft(db, job.organizationId, job.rcaId)
  if (!rca) return
  let draft: RcaDraft
  try {
    // The links may have been removed since the draft was asked for: nothing is drafted from nothing.
    const links = await listLinks(db, job.organizationId, rca.id)
    if (links.length === 0) throw new AnalyzerError(NOTHING_LINKED, false)
    const guard = createSpendGuard(deps.database, deps.ai, { organizationId: job.organizationId, referenceId: rca.id })
    const context = await draftContext(db, rca, links)
    if (context.incidents.length === 0) throw new AnalyzerError(GONE, false)
    draft = await deps.analyzer.draftRca(context, guard)
  } catch (error) {
    const failure =
      error instanceof AnalyzerError ? error : new AnalyzerError(`the draft failed: ${(error as Error).message}`, true, { cause: error })
    const retrying = failure.retryable && attempt.retryCount < attempt.retryLimit
    await db.transaction().execute(async (trx) => {
      await setbackDraft(trx, job.organizationId, rca.id, retrying ? 'queued' : 'failed', failure.message)
      const spent = failure.usage
      if (spent && spent.promptTokens + spent.completionTokens > 0) {
        await recordSpend(trx, deps.ai, { organizationId: job.organizationId, feature: 'rca_draft', referenceId: rca.id, usage: spent })
      } else {
        await releaseReservations(trx, job.organizationId, rca.id)
      }
    })
    deps.log.warn({ rcaId: rca.id, attempt: attempt.retryCount + 1, retrying, err: failure }, 'RCA draft attempt failed')
    if (retrying) throw failure
    return
  }
  const { summary, rootCause, impact, timeline, usage } = draft
  await db.transaction().execute(async (trx) => {
    const saved = await saveDraft(trx, job.organizationId, rca.id, {
      sections: { summary, rootCause, impact, timeline },
      overwrite: rca.draftOverwrite,
      suspectedDeployId: draft.suspectedDeployId,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
    })
    if (!saved) return
    await recordSpend(trx, deps.ai, { organizationId: job.organizationId, feature: 'rca_draft', referenceId: rca.id, usage })
  })
}
