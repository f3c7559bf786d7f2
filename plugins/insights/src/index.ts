import type { FastifyPluginAsync } from 'fastify'
import { createAnalyzer } from '@svc/ai'
import { DEFAULT_AI_CONFIG, type AiConfig } from '@svc/config'
import {
  alertGetsAnalysis,
  subscribe,
  type AlertCreated,
  type DeployRecorded,
  type IncidentChanged,
  type TicketStatusChanged,
} from '@svc/events'
import type { Database } from '@svc/db'
import { ensureQueue, workEach, type JobQueue } from '@svc/jobs'
import { agentRoutes } from './agents/routes.js'
import { requestAnalysis } from './analyses/request.js'
import { insightRoutes } from './analyses/routes.js'
import { ALERT_CREATED_QUEUE, ANALYZE_QUEUE, aiJobPolicy, type AnalyzeJob } from './analyses/queue.js'
import { processAnalysisJob } from './analyses/worker.js'
import {
  DEPLOY_RECORDED_QUEUE,
  INCIDENT_CHANGED_QUEUE,
  REINVESTIGATE_QUEUE,
  reinvestigation,
  type ReinvestigateJob,
} from './investigation/reinvestigation.js'
import { actionItemRoutes } from './rcas/action-items.js'
import { DRAFT_QUEUE, processDraftJob, type DraftJob } from './rcas/draft-worker.js'
import { followTicket, TICKET_STATUS_QUEUE } from './rcas/ticket-follow.js'
import { rcaExportRoutes } from './rcas/export.js'
import { rcaGenerateRoutes } from './rcas/generate.js'
import { rcaLinkRoutes } from './rcas/links.js'
import { rcaRoutes } from './rcas/routes.js'
import { incidentSearchRoutes } from './rcas/search.js'
import { rcaStatsRoutes } from './rcas/stats.js'
import { runbookRoutes } from './runbooks/routes.js'
import { agentSwitches } from './queries/agents.js'
import { usageRoutes } from './usage/routes.js'

export interface InsightsOptions {
  ai?: AiConfig
  /** Where the product API is reached: the links an action item's ticket carries back to its RCA. */
  productUrl?: string
}

const POLLING_INTERVAL_SECONDS = 1
const ONE_AT_A_TIME = { batchSize: 1, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }

/**
 * The AI insights surface of the product API: analyses (`/insights`), their job worker, the
 * automatic analysis of new P1/P2 alerts and of configs that ask for it, usage budgets, and RCA
 * documents with their incident links and action items.
 */
export const insightsSurface: FastifyPluginAsync<InsightsOptions> = async (app, options) => {
  const ai = options.ai ?? DEFAULT_AI_CONFIG
  const analyzer = createAnalyzer(ai.openai)
  const { jobs, database } = app
  let analyzeWorker: string | undefined
  let draftWorker: string | undefined

  await app.register(insightRoutes, { ai, wakeWorker: () => analyzeWorker && jobs.notifyWorker(analyzeWorker) })
  await app.register(usageRoutes, { ai })
  for (const routes of [agentRoutes, runbookRoutes, rcaRoutes, rcaLinkRoutes, incidentSearchRoutes, rcaStatsRoutes, rcaExportRoutes])
    await app.register(routes)
  await app.register(actionItemRoutes, { productUrl: options.productUrl ?? 'http://localhost:3003' })
  await app.register(rcaGenerateRoutes, { ai, wakeWorker: () => draftWorker && jobs.notifyWorker(draftWorker) })

  // Workers start once the app is ready and stop with it; jobs in flight finish when the queue stops.
  app.addHook('onReady', async () => {
    await ensureQueue(jobs, ANALYZE_QUEUE, aiJobPolicy(ai))
    await ensureQueue(jobs, DRAFT_QUEUE, aiJobPolicy(ai))
    await subscribe(jobs, 'alert.created', ALERT_CREATED_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
    await subscribe(jobs, 'incident.changed', INCIDENT_CHANGED_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
    await subscribe(jobs, 'deploy.recorded', DEPLOY_RECORDED_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
    await ensureQueue(jobs, REINVESTIGATE_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
    await subscribe(jobs, 'ticket.status_changed', TICKET_STATUS_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })

    const log = app.log.child({ surface: 'insights' })
    // One job at a time, and the next fetched as soon as one is done (workEach): a burst of 20
    // alerts took 20 polling intervals to get its analyses asked for.
    analyzeWorker = await workEach<AnalyzeJob>(jobs, ANALYZE_QUEUE, ONE_AT_A_TIME, (job) =>
      processAnalysisJob({ database, jobs, analyzer, ai, log }, job.data, job),
    )
    draftWorker = await workEach<DraftJob>(jobs, DRAFT_QUEUE, ONE_AT_A_TIME, (job) =>
      processDraftJob({ database, analyzer, ai, log }, job.data, job),
    )
    await workEach<AlertCreated>(jobs, ALERT_CREATED_QUEUE, ONE_AT_A_TIME, async (job) => {
      const event = job.data
      if (!alertGetsAnalysis(event)) return
      // An organization that turned the investigator off gets no automatic investigations.
      if (!(await agentSwitches(database.db, event.organizationId)).investigator) return
      const key = { organizationId: event.organizationId, sourceProduct: 'alerting' as const, incidentId: event.alertId }
      // A redelivered event finds the incident's automatic analysis and asks for nothing more.
      const result = await requestAnalysis(database, jobs, ai, key, { trigger: 'automatic', requestedBy: null })
      if (result.outcome === 'requested' && analyzeWorker) jobs.notifyWorker(analyzeWorker)
    })
  })
  app.addHook('onReady', async () => {
    const changes = reinvestigation(database, jobs, ai)
    await workEach<IncidentChanged>(jobs, INCIDENT_CHANGED_QUEUE, ONE_AT_A_TIME, (job) => changes.onIncidentChanged(job.data))
    await workEach<DeployRecorded>(jobs, DEPLOY_RECORDED_QUEUE, ONE_AT_A_TIME, (job) => changes.onDeployRecorded(job.data))
    await workEach<TicketStatusChanged>(jobs, TICKET_STATUS_QUEUE, ONE_AT_A_TIME, (job) => followTicket(database.db, job.data))
    await workEach<ReinvestigateJob>(jobs, REINVESTIGATE_QUEUE, ONE_AT_A_TIME, async (job) => {
      const result = await changes.reinvestigate(job.data)
      if (result.outcome === 'requested' && analyzeWorker) jobs.notifyWorker(analyzeWorker)
    })
  })
  app.addHook('onClose', async () => {
    for (const queue of [INCIDENT_CHANGED_QUEUE, DEPLOY_RECORDED_QUEUE, REINVESTIGATE_QUEUE, TICKET_STATUS_QUEUE]) await jobs.offWork(queue)
    await jobs.offWork(ANALYZE_QUEUE)
    await jobs.offWork(ALERT_CREATED_QUEUE)
    await jobs.offWork(DRAFT_QUEUE)
  })
}

export { aiUsageBetween, hasAnalysis, latestAnalysesOf, latestAnalysisOf, rcasAbout } from './reads.js'
export { pruneAnalysisEvents } from './retention.js'
export { openRcaForIncident } from './rcas/for-incident.js'

/**
 * How another surface asks for an analysis of one of its alerts (alerting's workflows): as the
 * automatic analysis of the incident, so one already made or running is not made again, within
 * the organization's budget. The analysis worker picks the job up at its next poll.
 */
export function alertAnalysisStarter(database: Database, jobs: JobQueue, ai: AiConfig = DEFAULT_AI_CONFIG) {
  return ({ organizationId, alertId }: { organizationId: string; alertId: string }) =>
    requestAnalysis(
      database,
      jobs,
      ai,
      { organizationId, sourceProduct: 'alerting', incidentId: alertId },
      { trigger: 'automatic', requestedBy: null },
    )
}
