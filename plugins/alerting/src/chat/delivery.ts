import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, workEach, type JobQueue } from '@svc/jobs'
import type { LatestAnalysisReader } from '../alerts/command-room.js'
import type { AlertRow } from '../queries/alerts.js'
import { alertControls } from '../chat-interactivity/cards.js'
import { recordSlackMessage } from '../chat-interactivity/queries.js'
import { incidentOfAlert } from '../incidents/queries.js'
import { findChatIntegration } from '../queries/chat-integrations.js'
import { queuedAttempt, settleAttempt } from '../queries/escalations.js'
import type { ChatAlert } from './messages.js'
import { ChatFailure, type ChatSender } from './send.js'

/** One job per chat message of an escalation step: `{ attemptId }`. */
export const CHAT_QUEUE = 'alerting.chat-delivery'
const RETRY_LIMIT = 4

export interface ChatJob {
  attemptId: string
}

export interface ChatDeliveryDeps {
  database: Database
  jobs: JobQueue
  sender: ChatSender
  latestAnalysis: LatestAnalysisReader
  productUrl: string
  log: FastifyBaseLogger
}

export type ChatDelivery = ReturnType<typeof createChatDelivery>

/** The message about an alert, with its analysis once that is done. */
export async function chatAlertOf(
  db: Executor,
  deps: Pick<ChatDeliveryDeps, 'latestAnalysis' | 'productUrl'>,
  organizationId: string,
  alert: AlertRow,
  reason?: string,
): Promise<ChatAlert> {
  const analysis = await deps.latestAnalysis(db, organizationId, { sourceProduct: 'alerting', incidentId: alert.id })
  return {
    priority: alert.priority,
    title: alert.title,
    service: alert.service,
    source: alert.source,
    status: alert.status,
    alertUrl: `${deps.productUrl}/api/v1/organizations/${organizationId}/alerts/${alert.id}`,
    ...(analysis?.status === 'completed' && analysis.summary
      ? // The on-call agent's two lines are what a responder reads first; the analysis' summary until they exist.
        { analysis: { summary: analysis.oncall?.join('\n') ?? analysis.summary, rootCause: analysis.rootCause } }
      : {}),
    ...(reason ? { reason } : {}),
  }
}

/**
 * Chat messages of escalation steps, each a pg-boss job sent in the step's transaction and
 * retried with backoff when the chat service may recover (5xx, 429, no connection); the
 * attempt records the outcome and the last error.
 */
export function createChatDelivery(deps: ChatDeliveryDeps) {
  const { database, jobs, sender, log } = deps
  let worker: string | undefined

  async function deliver(job: ChatJob, attempt: { retryCount: number }): Promise<void> {
    const { db } = database
    // The attempt with its alert: one read.
    const queued = await queuedAttempt(db, job.attemptId)
    if (!queued) return
    const { attemptId } = queued
    const integration = await findChatIntegration(db, queued.organizationId, queued.targetId)
    if (!integration || !integration.enabled) {
      await settleAttempt(db, attemptId, 'failed', integration ? 'the chat integration is disabled' : 'the chat integration was deleted')
      return
    }
    const reason = `Escalation step ${queued.step + 1}${queued.round > 0 ? `, round ${queued.round + 1}` : ''}`
    try {
      // A Slack app that can hear its buttons (a signing secret is set) gets them on the page,
      // and the message is kept so pressing one can rewrite it.
      const interactive = integration.kind === 'slack_bot' && integration.signingSecret !== null
      const controls = interactive
        ? alertControls({
            alertId: queued.id,
            status: queued.status,
            acknowledgedBy: null,
            inIncident: (await incidentOfAlert(db, queued.organizationId, queued.id)) !== undefined,
          })
        : undefined
      const posted = await sender.send(integration, await chatAlertOf(db, deps, queued.organizationId, queued, reason), controls)
      if (posted && interactive)
        await recordSlackMessage(db, {
          organizationId: queued.organizationId,
          integrationId: integration.id,
          ...posted,
          alertId: queued.id,
        })
      await settleAttempt(db, attemptId, 'sent', null)
    } catch (error) {
      const failure = error instanceof ChatFailure ? error : new ChatFailure((error as Error).message, false)
      const retrying = !failure.permanent && attempt.retryCount < RETRY_LIMIT
      await settleAttempt(db, attemptId, retrying ? 'queued' : 'failed', failure.message)
      log.warn({ attemptId, retrying, err: failure }, 'chat message not delivered')
      if (retrying) throw failure
    }
  }

  return {
    /** Sends the attempt's job in the caller's transaction. */
    wake() {
      if (worker) jobs.notifyWorker(worker)
    },
    async start() {
      await ensureQueue(jobs, CHAT_QUEUE, { retryLimit: RETRY_LIMIT, retryDelay: 5, retryBackoff: true, expireInSeconds: 60 })
      worker = await workEach<ChatJob>(jobs, CHAT_QUEUE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, (job) => deliver(job.data, job))
    },
    async stop() {
      await jobs.offWork(CHAT_QUEUE)
      worker = undefined
    },
  }
}
