import type { FastifyPluginAsync } from 'fastify'
import type { OutboundConfig } from '@svc/config'
import { subscribe, type AnalysisCompleted, type CheckStateChanged, type MemberRemoved } from '@svc/events'
import { workEach } from '@svc/jobs'
import type { Notifier } from '@svc/notifier'
import { ANALYSIS_COMPLETED_QUEUE, postCompletedAnalysis } from './chat/analysis-follow-up.js'
import { createChatDelivery } from './chat/delivery.js'
import { CHECK_FAILED_QUEUE, CHECK_RECOVERED_QUEUE, onCheckFailed, onCheckRecovered } from './intake/checks.js'
import { chatIntegrationRoutes } from './destinations/chat-integrations/routes.js'
import { chatInteractivity } from './chat/slack/index.js'
import { createChatSender } from './destinations/chat-integrations/send.js'
import { createOutboundClient } from './destinations/http.js'
import { MEMBER_REMOVED_QUEUE, forgetMember } from './oncall/forget-member.js'
import { alertPayload, createWebhookDelivery } from './destinations/outbound-webhooks/delivery.js'
import { createAlertEventBus } from './alerts/event-bus.js'
import { outboundWebhookSubscriber } from './destinations/outbound-webhooks/subscriber.js'
import { correlationSubscriber } from './incidents/correlation/subscriber.js'
import { workflowSubscriber } from './workflows/subscriber.js'
import { outboundWebhookRoutes } from './destinations/outbound-webhooks/routes.js'
import type { IngestLimits } from './intake/limits.js'
import { ackLinkRoutes } from './paging/ack-link-routes.js'
import type { ContactReader, PreferencesReader, PushReader } from './oncall/paging-plan.js'
import { twilioRoutes } from './paging/twilio-routes.js'
import { createEscalator } from './paging/escalator.js'
import { notificationRoutes } from './paging/attempt-routes.js'
import { escalationPolicyRoutes } from './oncall/policies/routes.js'
import { supportHoursRoutes } from './oncall/support-hours/routes.js'
import { correlationRoutes } from './incidents/correlation/routes.js'
import { STATUS_INCIDENT_OPENED_QUEUE, startCorrelatingStatusIncidents } from './incidents/correlation/status-pages.js'
import { incidentLinkRoutes, type AnalysisCheck, type RcaReader, type StatusIncidentsReader } from './incidents/links-routes.js'
import { incidentOfAlert } from './incidents/queries.js'
import { incidentRoutes } from './incidents/routes.js'
import { incidentCommandRoomRoutes } from './incidents/command-room-routes.js'
import { incidentPagingRoutes } from './paging/incident-paging-routes.js'
import { regroupRoutes } from './incidents/regroup-routes.js'
import { relatedRoutes } from './incidents/related-routes.js'
import { commandRoomRoutes, type LatestAnalysesReader, type LatestAnalysisReader } from './incidents/alert-command-room-routes.js'
import { alertRoutes } from './alerts/routes.js'
import { deployEventRoutes } from './intake/deploys/routes.js'
import { calendarFeedRoutes } from './oncall/schedules/calendar-feed-routes.js'
import { scheduleRoutes } from './oncall/schedules/routes.js'
import { silenceRoutes } from './oncall/silences/routes.js'
import { teamRoutes } from './oncall/teams/routes.js'
import { ingestionRoutes } from './intake/routes.js'
import { createWorkflowRunner, type AnalysisStarter } from './workflows/runner.js'
import { workflowRoutes } from './workflows/routes.js'
import { webhookConfigRoutes } from './intake/configs/routes.js'
import { configUsingPolicy } from './intake/configs/queries.js'
import { chatIntegrationsAmong } from './destinations/chat-integrations/queries.js'
import { outboundWebhooksAmong } from './destinations/outbound-webhooks/queries.js'

export interface AlertingOptions {
  ingestLimits: IngestLimits
  /** The insights surface's read of an alert's latest analysis, for command rooms. */
  latestAnalysis: LatestAnalysisReader
  /** The same for a batch of alerts, for chat pages. */
  latestAnalyses: LatestAnalysesReader
  /** The insights surface's request for an analysis, for workflows' start_analysis action. */
  startAnalysis: AnalysisStarter
  /** The product-users surface's read of notification preferences, for paging. */
  preferences: PreferencesReader
  /** The product-users surface's read of verified phone numbers, for SMS and voice pages and replies. */
  contacts: ContactReader
  /** The product-users surface's read of web-push subscriptions, for push pages. */
  pushSubscriptions: PushReader
  /** The status pages surface's read of the status page incidents about an incident, for its links. */
  statusIncidents: StatusIncidentsReader
  /** The insights surface's read of RCA documents linked to incidents and alerts, for an incident's links. */
  rcas: RcaReader
  /** The insights surface's answer to whether an analysis is the organization's, for a status update's `draftOf`. */
  hasAnalysis: AnalysisCheck
  /** The service's outbound messages (e-mail today). */
  notifier: Notifier
  /** Where links in pages point: the product API's public base URL. */
  productUrl: string
  /** Requests to users' targets (chat webhooks) and Slack's Web API. */
  outbound: OutboundConfig
  /** Billing is on: ingestion needs the organization's plan (with 7 days of grace). */
  enforcePlans?: boolean
}

/**
 * The alerting surface of the product API, registered as its own encapsulated plugin: webhook
 * configurations, ingestion, alerts, command rooms, deploy events, on-call teams, schedules, escalation policies, silences, the escalations that page people, and workflows.
 */
export const alertingSurface: FastifyPluginAsync<AlertingOptions> = async (app, options) => {
  const outbound = createOutboundClient({ allowPrivateTargets: options.outbound.allowPrivateTargets })
  const chatSender = createChatSender({ outbound, slackApiUrl: options.outbound.slackApiUrl })
  const chat = createChatDelivery({
    database: app.database,
    jobs: app.jobs,
    sender: chatSender,
    latestAnalysis: options.latestAnalysis,
    latestAnalyses: options.latestAnalyses,
    productUrl: options.productUrl,
    log: app.log.child({ component: 'chat' }),
  })
  app.addHook('onReady', () => chat.start())
  app.addHook('onClose', async () => {
    await chat.stop()
    await outbound.close()
  })
  const webhooks = createWebhookDelivery({
    database: app.database,
    jobs: app.jobs,
    outbound,
    log: app.log.child({ component: 'outbound-webhooks' }),
  })
  const escalator = createEscalator({
    queueWebhook: async (db, page) => {
      const extra = { escalation: { round: page.position.round, step: page.position.step, policy: page.position.policyName } }
      await webhooks.queue(db, {
        webhookId: page.webhookId,
        organizationId: page.organizationId,
        event: 'alert.escalated',
        alertId: page.alert.id,
        attemptId: page.attemptId,
        payload: alertPayload('alert.escalated', page.organizationId, page.alert, extra),
      })
    },
    chatQueued: () => {
      chat.wake()
      webhooks.wake()
    },
    database: app.database,
    jobs: app.jobs,
    notifier: options.notifier,
    preferences: options.preferences,
    contacts: options.contacts,
    pushSubscriptions: options.pushSubscriptions,
    productUrl: options.productUrl,
    latestAnalysis: options.latestAnalysis,
    log: app.log.child({ component: 'escalator' }),
  })
  app.addHook('onReady', () => escalator.start())
  const workflows = createWorkflowRunner({
    database: app.database,
    jobs: app.jobs,
    log: app.log.child({ component: 'workflows' }),
    sender: chatSender,
    latestAnalysis: options.latestAnalysis,
    productUrl: options.productUrl,
    webhooks,
    escalator,
    startAnalysis: options.startAnalysis,
  })
  // The alert event bus: every subscriber registers here, before the first alert is fired.
  const bus = createAlertEventBus({ database: app.database, log: app.log.child({ component: 'event-dispatcher' }) })
  bus.subscribe(correlationSubscriber({ jobs: app.jobs, correlated: () => escalator.wake() }))
  bus.subscribe(workflowSubscriber(workflows))
  bus.subscribe(outboundWebhookSubscriber(webhooks))
  app.addHook('onReady', async () => {
    await webhooks.start()
    await workflows.start()
    bus.start()
  })
  app.addHook('onClose', async () => {
    await bus.stop()
    await workflows.stop()
    await webhooks.stop()
  })
  app.addHook('onReady', async () => {
    await subscribe(app.jobs, 'member.removed', MEMBER_REMOVED_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
    await workEach<MemberRemoved>(app.jobs, MEMBER_REMOVED_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, (job) =>
      forgetMember(app.database, job.data),
    )
  })
  app.addHook('onClose', () => app.jobs.offWork(MEMBER_REMOVED_QUEUE))
  app.addHook('onReady', () => startCorrelatingStatusIncidents(app.database, app.jobs))
  app.addHook('onClose', () => app.jobs.offWork(STATUS_INCIDENT_OPENED_QUEUE))
  app.addHook('onReady', async () => {
    await subscribe(app.jobs, 'analysis.completed', ANALYSIS_COMPLETED_QUEUE, { retryLimit: 3, retryDelay: 5, retryBackoff: true })
    const followUp = {
      database: app.database,
      sender: chatSender,
      latestAnalysis: options.latestAnalysis,
      productUrl: options.productUrl,
      log: app.log.child({ component: 'chat' }),
    }
    await workEach<AnalysisCompleted>(app.jobs, ANALYSIS_COMPLETED_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, (job) =>
      postCompletedAnalysis(followUp, job.data),
    )
  })
  app.addHook('onClose', () => app.jobs.offWork(ANALYSIS_COMPLETED_QUEUE))
  app.addHook('onReady', async () => {
    await subscribe(app.jobs, 'check.failed', CHECK_FAILED_QUEUE, { retryLimit: 5, retryDelay: 2, retryBackoff: true })
    await subscribe(app.jobs, 'check.recovered', CHECK_RECOVERED_QUEUE, { retryLimit: 5, retryDelay: 2, retryBackoff: true })
    await workEach<CheckStateChanged>(app.jobs, CHECK_FAILED_QUEUE, { batchSize: 20, pollingIntervalSeconds: 1 }, async (job) => {
      if (await onCheckFailed(app.database, app.jobs, bus.interest, job.data)) {
        escalator.wake()
        bus.wake()
      }
    })
    await workEach<CheckStateChanged>(app.jobs, CHECK_RECOVERED_QUEUE, { batchSize: 20, pollingIntervalSeconds: 1 }, (job) =>
      onCheckRecovered(app.database, job.data),
    )
  })
  app.addHook('onClose', async () => {
    await app.jobs.offWork(CHECK_FAILED_QUEUE)
    await app.jobs.offWork(CHECK_RECOVERED_QUEUE)
  })
  app.addHook('onClose', () => escalator.stop())

  await app.register(webhookConfigRoutes)
  await app.register(ingestionRoutes, {
    ingestLimits: options.ingestLimits,
    enforcePlans: options.enforcePlans,
    interest: bus.interest,
    wake: { escalator: () => escalator.wake(), dispatcher: () => bus.wake() },
  })
  await app.register(alertRoutes, { incidentOf: incidentOfAlert })
  await app.register(commandRoomRoutes, { latestAnalysis: options.latestAnalysis })
  await app.register(incidentRoutes)
  await app.register(regroupRoutes)
  await app.register(incidentPagingRoutes, { escalator })
  await app.register(incidentCommandRoomRoutes, { latestAnalysis: options.latestAnalysis })
  await app.register(relatedRoutes)
  await app.register(incidentLinkRoutes, { statusIncidents: options.statusIncidents, rcas: options.rcas, hasAnalysis: options.hasAnalysis })
  await app.register(correlationRoutes)
  await app.register(deployEventRoutes)
  await app.register(teamRoutes)
  await app.register(scheduleRoutes)
  await app.register(calendarFeedRoutes, { productUrl: options.productUrl })
  await app.register(escalationPolicyRoutes, {
    destinations: { chat: chatIntegrationsAmong, webhook: outboundWebhooksAmong },
    references: [configUsingPolicy],
  })
  await app.register(supportHoursRoutes)
  await app.register(notificationRoutes)
  await app.register(ackLinkRoutes)
  // Without Twilio settings there is nothing to call back: the routes exist only with them.
  const twilio = options.notifier.config.twilio
  if (twilio) await app.register(twilioRoutes, { twilio, contacts: options.contacts })
  await app.register(silenceRoutes, { silenceEnded: () => escalator.wakeSilences() })
  await app.register(outboundWebhookRoutes, { outbound: options.outbound })
  await app.register(workflowRoutes)
  await app.register(chatIntegrationRoutes, { outbound: options.outbound, sender: chatSender, productUrl: options.productUrl })
  await app.register(chatInteractivity, {
    escalator,
    latestAnalysis: options.latestAnalysis,
    productUrl: options.productUrl,
    slackApiUrl: options.outbound.slackApiUrl,
  })
}

export {
  alertTimelines,
  alertUnderInvestigation,
  dependencyEdges,
  deploysAround,
  incidentUnderInvestigation,
  pagingPoliciesOf,
  similarResolvedIncidentsOf,
} from './investigation-reads.js'
export { pruneAlertingHistory, type AlertingRetention } from './retention.js'
export type { AnalysisStart, AnalysisStarter } from './workflows/runner.js'
export type { PagingPreferences, ContactReader, PreferencesReader, PushReader } from './oncall/paging-plan.js'
export {
  alertIncident,
  alertReportBetween,
  type AlertResponseStats,
  alertSummaries,
  alertTimeline,
  deploysBetween,
  escalationPolicyExists,
  searchAlerts,
  similarResolvedAlerts,
  type AlertSummary,
} from './reads.js'
