import type { FastifyPluginAsync } from 'fastify'
import type { OutboundConfig, SecretSealer } from '@svc/config'
import type { Notifier } from '@svc/notifier'
import { alertsModule, createAlertEventBus } from './alerts/index.js'
import { chatModule, createChatDelivery } from './chat/index.js'
import {
  chatIntegrationsAmong,
  createChatSender,
  createOutboundClient,
  createWebhookDelivery,
  alertPayload,
  createTrackerClient,
  destinationsModule,
  outboundWebhookSubscriber,
  outboundWebhooksAmong,
} from './destinations/index.js'
import {
  type AnalysisCheck,
  alertMovesSubscriber,
  correlationSubscriber,
  createIncidentChangeBus,
  incidentOfAlert,
  incidentsModule,
  type LatestAnalysesReader,
  type LatestAnalysisReader,
  type RcaReader,
  type StatusIncidentsReader,
} from './incidents/index.js'
import { configUsingPolicy, createWriteOrder, type IngestLimits, intakeModule } from './intake/index.js'
import {
  ackTimeoutFromNow,
  type ContactReader,
  oncallModule,
  type PreferencesReader,
  type PushReader,
  type ServiceShowings,
} from './oncall/index.js'
import { createEscalator, pagingModule, resolvedNoticeSubscriber, settleAttempt, type SmsOptOut } from './paging/index.js'
import { type AnalysisStarter, createWorkflowRunner, type RcaOpener, workflowSubscriber, workflowsModule } from './workflows/index.js'

export interface AlertingOptions {
  ingestLimits: IngestLimits
  /** The insights surface's read of an alert's latest analysis, for command rooms. */
  latestAnalysis: LatestAnalysisReader
  /** The same for a batch of alerts, for chat pages. */
  latestAnalyses: LatestAnalysesReader
  /** The insights surface's request for an analysis, for workflows' start_analysis action. */
  startAnalysis: AnalysisStarter
  /** The insights surface's RCA for an incident, for workflows' create_rca action. */
  openRca: RcaOpener
  /** The product-users surface's read of notification preferences, for paging. */
  preferences: PreferencesReader
  /** The product-users surface's read of verified phone numbers, for SMS and voice pages and replies. */
  contacts: ContactReader
  /** What other surfaces end when a number texts STOP to our Twilio number (status page SMS subscriptions). */
  smsOptOut?: SmsOptOut
  /** The product-users surface's read of web-push subscriptions, for push pages. */
  pushSubscriptions: PushReader
  /** The status pages surface's read of the status page incidents about an incident, for its links. */
  statusIncidents: StatusIncidentsReader
  /** The insights surface's read of RCA documents linked to incidents and alerts, for an incident's links. */
  rcas: RcaReader
  /** The insights surface's answer to whether an analysis is the organization's, for a status update's `draftOf`. */
  hasAnalysis: AnalysisCheck
  /** The status pages' and synthetics' reads of what shows a catalog service: components following it, checks belonging to it. */
  serviceShowings: ServiceShowings
  /** The service's outbound messages (e-mail today). */
  notifier: Notifier
  /** Where links in pages point: the product API's public base URL. */
  productUrl: string
  /** Requests to users' targets (chat webhooks) and Slack's Web API. */
  outbound: OutboundConfig
  /** Seals ticket trackers' credentials and webhook secrets (the secrets key). */
  sealer: SecretSealer
  /** Billing is on: ingestion needs the organization's plan (with 7 days of grace). */
  enforcePlans?: boolean
}

/**
 * The alerting surface of the product API, registered as its own encapsulated plugin: webhook
 * configurations, ingestion, alerts, command rooms, deploy events, on-call teams, schedules, escalation policies, silences, the escalations that page people, and workflows.
 */
/**
 * The alerting surface of the product API, registered as its own encapsulated plugin: the
 * composition root of its eight modules (docs/alerting.md). It makes the services that cross
 * modules (the outbound client and chat sender, the webhook and chat deliveries, the escalator,
 * the workflow runner, the alert event bus), starts and stops them in order, wires the ports by
 * which a lower module reaches a higher one, and registers each module's sub-plugin.
 */
export const alertingSurface: FastifyPluginAsync<AlertingOptions> = async (app, options) => {
  const outbound = createOutboundClient({ allowPrivateTargets: options.outbound.allowPrivateTargets })
  const trackers = createTrackerClient({ allowPrivateTargets: options.outbound.allowPrivateTargets })
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
    await trackers.close()
  })
  const webhooks = createWebhookDelivery({
    database: app.database,
    jobs: app.jobs,
    outbound,
    settleAttempt,
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
    dispatcherProgressedWithin: (ms) => bus.progressedWithin(ms),
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
    openRca: options.openRca,
  })
  // The alert event bus: every subscriber registers here, before the first alert is fired. It
  // claims events once the urgent firing writes under way have committed (write-order.ts).
  const writeOrder = createWriteOrder()
  const bus = createAlertEventBus({
    database: app.database,
    jobs: app.jobs,
    log: app.log.child({ component: 'event-dispatcher' }),
    writesUnderWay: writeOrder.urgentWritten,
  })
  bus.subscribe(correlationSubscriber({ jobs: app.jobs, correlated: () => escalator.wake() }))
  bus.subscribe(alertMovesSubscriber({ jobs: app.jobs }))
  bus.subscribe(workflowSubscriber(workflows))
  bus.subscribe(outboundWebhookSubscriber(webhooks))
  bus.subscribe(
    resolvedNoticeSubscriber({
      notifier: options.notifier,
      preferences: options.preferences,
      contacts: options.contacts,
      pushSubscriptions: options.pushSubscriptions,
      productUrl: options.productUrl,
    }),
  )
  // The incident change bus: workflows on incident triggers.
  const incidentChanges = createIncidentChangeBus({
    database: app.database,
    jobs: app.jobs,
    log: app.log.child({ component: 'incident-changes' }),
  })
  incidentChanges.subscribe(workflows.incidentSubscriber())
  app.addHook('onReady', async () => {
    await webhooks.start()
    await workflows.start()
    bus.start()
    incidentChanges.start()
  })
  // Stopped in this order: the dispatchers, then the workflows they start, then the webhooks both queue.
  app.addHook('onClose', async () => {
    await bus.stop()
    await incidentChanges.stop()
    await workflows.stop()
    await webhooks.stop()
  })
  app.addHook('onClose', () => escalator.stop())

  // The modules, lowest first. Paths are literal (no prefix).
  await app.register(alertsModule, { incidentOf: incidentOfAlert, ackTimeout: ackTimeoutFromNow })
  await app.register(oncallModule, {
    productUrl: options.productUrl,
    serviceShowings: options.serviceShowings,
    destinations: { chat: chatIntegrationsAmong, webhook: outboundWebhooksAmong },
    references: [configUsingPolicy],
    silenceEnded: () => escalator.wakeSilences(),
  })
  await app.register(destinationsModule, {
    outbound: options.outbound,
    sender: chatSender,
    productUrl: options.productUrl,
    sealer: options.sealer,
  })
  await app.register(intakeModule, {
    ingestLimits: options.ingestLimits,
    enforcePlans: options.enforcePlans,
    interest: bus.interest,
    wake: { escalator: () => escalator.wake(), dispatcher: () => bus.wake() },
    writeOrder,
  })
  await app.register(incidentsModule, {
    sealer: options.sealer,
    trackers,
    productUrl: options.productUrl,
    latestAnalysis: options.latestAnalysis,
    statusIncidents: options.statusIncidents,
    rcas: options.rcas,
    hasAnalysis: options.hasAnalysis,
  })
  await app.register(pagingModule, {
    escalator,
    twilio: options.notifier.config.twilio,
    contacts: options.contacts,
    ...(options.smsOptOut ? { smsOptOut: options.smsOptOut } : {}),
  })
  await app.register(chatModule, {
    sender: chatSender,
    escalator,
    latestAnalysis: options.latestAnalysis,
    productUrl: options.productUrl,
    slackApiUrl: options.outbound.slackApiUrl,
  })
  await app.register(workflowsModule)
}

export {
  alertTimelines,
  alertUnderInvestigation,
  dependencyEdges,
  deploysAround,
  incidentUnderInvestigation,
  pagingPoliciesOf,
  sameServices,
  similarResolvedIncidentsOf,
} from './investigation-reads.js'
export { pruneAlertingHistory, type AlertingRetention } from './retention.js'
/** RCA action items' tickets, for the insights surface (decision 0031, "Action items as tickets"). */
export { actionItemTickets, openActionItemTicket } from './incidents/index.js'
export type { AnalysisStart, AnalysisStarter, RcaOpener } from './workflows/index.js'
export type { PagingPreferences, ContactReader, PreferencesReader, PushReader } from './oncall/index.js'
/** Status page maintenance quiets alerts through silences of its own (decision 0015, "Maintenance quiets monitoring"). */
export { type MaintenanceQuiet, quietForMaintenance } from './oncall/index.js'
export {
  alertIncident,
  incidentReportBetween,
  type IncidentResponseStats,
  alertSummaries,
  alertTimeline,
  deploysBetween,
  escalationPolicyExists,
  searchAlerts,
  similarResolvedAlerts,
  type AlertSummary,
} from './reads.js'
export {
  incidentIdOfAlert,
  incidentRecord,
  type IncidentRecord,
  incidentSummaries,
  type IncidentSummary,
  searchAlertingIncidents,
} from './incident-reads.js'
