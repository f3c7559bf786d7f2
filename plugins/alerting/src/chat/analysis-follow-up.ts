import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '@svc/db'
import type { AnalysisCompleted } from '@svc/events'
import { type LatestAnalysisReader } from '../incidents/index.js'
import { findAlert } from '../alerts/index.js'
import { chatsPagedAbout } from '../paging/index.js'
import { type ChatSender, findChatIntegration } from '../destinations/index.js'
import { chatAlertOf } from './delivery.js'

/** Alerting's copy of `analysis.completed` events. */
export const ANALYSIS_COMPLETED_QUEUE = 'alerting.analysis-completed'

export interface FollowUpDeps {
  database: Database
  sender: ChatSender
  latestAnalysis: LatestAnalysisReader
  productUrl: string
  log: FastifyBaseLogger
}

/**
 * A page usually reaches chat before its analysis is done: when the analysis completes, each
 * chat integration that was paged about the alert gets the message again with the summary and
 * root cause. One try each; a chat that refuses it is logged, not retried, so a redelivered event
 * cannot post twice to the chats that took it.
 */
export async function postCompletedAnalysis(deps: FollowUpDeps, event: AnalysisCompleted): Promise<void> {
  if (event.incident.sourceProduct !== 'alerting') return
  const { db } = deps.database
  const { organizationId } = event
  const alert = await findAlert(db, organizationId, event.incident.incidentId)
  if (!alert) return
  for (const integrationId of await chatsPagedAbout(db, organizationId, alert.id)) {
    const integration = await findChatIntegration(db, organizationId, integrationId)
    if (!integration?.enabled) continue
    const message = await chatAlertOf(db, deps, organizationId, alert, 'Analysis done')
    // A newer analysis started since: its own completion posts it.
    if (!message.analysis) return
    try {
      await deps.sender.send(integration, message)
    } catch (error) {
      deps.log.warn({ alertId: alert.id, integrationId, err: error }, 'the completed analysis was not posted to chat')
    }
  }
}
