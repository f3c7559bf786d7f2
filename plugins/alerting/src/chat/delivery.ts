import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, workBatch, type JobQueue } from '@svc/jobs'
import {
  incidentOfAlert,
  incidentsOfAlerts,
  type LatestAnalysesReader,
  type LinkedIncident,
  type LatestAnalysis,
  type LatestAnalysisReader,
} from '../incidents/index.js'
import { type AlertRow } from '../alerts/index.js'
import { type QueuedAttempt, queuedAttempts, settleAttempts } from '../paging/index.js'
import { alertControls } from './slack/cards.js'
import { recordSlackMessage } from './slack/queries.js'
import { type ChatAlert, ChatFailure, type ChatIntegrationRow, chatIntegrationsByIds, type ChatSender } from '../destinations/index.js'
import { CHAT_QUEUE, type ChatJob } from '../paging/index.js'

const RETRY_LIMIT = 4
/**
 * Batches in flight at once per replica, as the e-mail sender keeps (decision 0011, "Batches"):
 * one posts while the other's reads and outcomes are written.
 */
const POSTERS = 2

export interface ChatDeliveryDeps {
  database: Database
  jobs: JobQueue
  sender: ChatSender
  latestAnalysis: LatestAnalysisReader
  /** The same read for a batch of alerts, in one statement. */
  latestAnalyses: LatestAnalysesReader
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
  const [analysis, incident] = await Promise.all([
    deps.latestAnalysis(db, organizationId, { sourceProduct: 'alerting', incidentId: alert.id }),
    incidentOfAlert(db, organizationId, alert.id),
  ])
  return chatAlertWith(analysis, incident, deps, organizationId, alert, reason)
}

/** `chatAlertOf` with the alert's latest analysis and its incident read already. */
function chatAlertWith(
  analysis: LatestAnalysis | undefined,
  incident: { number: number } | undefined,
  deps: Pick<ChatDeliveryDeps, 'productUrl'>,
  organizationId: string,
  alert: AlertRow,
  reason?: string,
): ChatAlert {
  return {
    priority: alert.priority,
    title: alert.title,
    service: alert.service,
    source: alert.source,
    status: alert.status,
    alertUrl: `${deps.productUrl}/api/v1/organizations/${organizationId}/alerts/${alert.id}`,
    ...(incident ? { incident: { reference: `INC-${incident.number}` } } : {}),
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
 *
 * Jobs are worked a batch at a time (up to 20, two batches in flight): the batch's attempts are
 * read in one statement, its integrations in one, its alerts' latest analyses and incidents in one
 * each per organization of the batch, and its outcomes written in one after every message of the
 * batch went out or failed, rather than four statements a message (decision 0014, "Chat
 * integrations"). A replica that dies between posting and recording leaves the attempts queued,
 * and the jobs' retries post them again, as a death between the two always could.
 */
export function createChatDelivery(deps: ChatDeliveryDeps) {
  const { database, jobs, sender, log } = deps
  let workers: string[] = []

  type Settlement = Parameters<typeof settleAttempts>[1][number]

  /** Posts one attempt's message; answers how it went, and the error that asks for a retry. */
  async function post(
    queued: QueuedAttempt,
    integration: ChatIntegrationRow | undefined,
    { analysis, incident }: { analysis: LatestAnalysis | undefined; incident: LinkedIncident | undefined },
    attempt: { retryCount: number },
  ): Promise<{ settlement: Settlement; retry?: Error }> {
    const { db } = database
    const { attemptId } = queued
    if (!integration || !integration.enabled) {
      const error = integration ? 'the chat integration is disabled' : 'the chat integration was deleted'
      return { settlement: { attemptId, status: 'failed', error } }
    }
    const reason = `Escalation step ${queued.step + 1}${queued.round > 0 ? `, round ${queued.round + 1}` : ''}`
    try {
      // A Slack app that can hear its buttons (a signing secret is set) gets them on the page,
      // and the message is kept so pressing one can rewrite it.
      const interactive = integration.kind === 'slack_bot' && integration.signingSecret !== null
      const controls = interactive
        ? alertControls({ alertId: queued.id, status: queued.status, acknowledgedBy: null, inIncident: incident !== undefined })
        : undefined
      const message = chatAlertWith(analysis, incident, deps, queued.organizationId, queued, reason)
      const posted = await sender.send(integration, message, controls)
      if (posted && interactive)
        await recordSlackMessage(db, {
          organizationId: queued.organizationId,
          integrationId: integration.id,
          ...posted,
          alertId: queued.id,
        })
      return { settlement: { attemptId, status: 'sent', error: null } }
    } catch (error) {
      const failure = error instanceof ChatFailure ? error : new ChatFailure((error as Error).message, false)
      const retrying = !failure.permanent && attempt.retryCount < RETRY_LIMIT
      log.warn({ attemptId, retrying, err: failure }, 'chat message not delivered')
      return {
        settlement: { attemptId, status: retrying ? 'queued' : 'failed', error: failure.message },
        ...(retrying ? { retry: failure } : {}),
      }
    }
  }

  /** The latest analysis and the incident of each attempt's alert, a statement each per organization of the batch. */
  async function alertContextOf(attempts: QueuedAttempt[]) {
    const alertsByOrganization = new Map<string, string[]>()
    for (const { organizationId, id } of attempts) {
      const alertIds = alertsByOrganization.get(organizationId)
      if (alertIds) alertIds.push(id)
      else alertsByOrganization.set(organizationId, [id])
    }
    const analyses = new Map<string, LatestAnalysis>()
    const incidents = new Map<string, LinkedIncident>()
    for (const [organizationId, alertIds] of alertsByOrganization) {
      const [ofAnalyses, ofIncidents] = await Promise.all([
        deps.latestAnalyses(database.db, organizationId, 'alerting', alertIds),
        incidentsOfAlerts(database.db, organizationId, alertIds),
      ])
      for (const [alertId, analysis] of ofAnalyses) analyses.set(alertId, analysis)
      for (const [alertId, incident] of ofIncidents) incidents.set(alertId, incident)
    }
    return { analyses, incidents }
  }

  async function deliverAll(batch: Array<{ data: ChatJob; retryCount: number }>): Promise<Array<Error | undefined>> {
    const { db } = database
    const attempts = new Map(
      (
        await queuedAttempts(
          db,
          batch.map((job) => job.data.attemptId),
        )
      ).map((row) => [row.attemptId, row]),
    )
    const integrations = await chatIntegrationsByIds(
      db,
      [...attempts.values()].map((queued) => ({ organizationId: queued.organizationId, id: queued.targetId })),
    )
    const { analyses, incidents } = await alertContextOf([...attempts.values()])
    const outcomes = await Promise.all(
      batch.map((job) => {
        const queued = attempts.get(job.data.attemptId)
        // Settled already (the job ran twice), or its alert is gone: nothing to post.
        return queued
          ? post(queued, integrations.get(queued.targetId), { analysis: analyses.get(queued.id), incident: incidents.get(queued.id) }, job)
          : undefined
      }),
    )
    await settleAttempts(
      db,
      outcomes.flatMap((outcome) => (outcome ? [outcome.settlement] : [])),
    )
    return outcomes.map((outcome) => outcome?.retry)
  }

  return {
    /** Sends the attempt's job in the caller's transaction. */
    wake() {
      for (const worker of workers) jobs.notifyWorker(worker)
    },
    async start() {
      await ensureQueue(jobs, CHAT_QUEUE, { retryLimit: RETRY_LIMIT, retryDelay: 5, retryBackoff: true, expireInSeconds: 60 })
      for (let poster = 0; poster < POSTERS; poster++)
        workers.push(await workBatch<ChatJob>(jobs, CHAT_QUEUE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, deliverAll))
    },
    async stop() {
      await jobs.offWork(CHAT_QUEUE)
      workers = []
    },
  }
}
