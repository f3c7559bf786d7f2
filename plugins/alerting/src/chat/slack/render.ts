import type { Executor } from '@svc/db'
import { findIncident, incidentResponders, incidentRoles, shownFieldsOf, type LatestAnalysisReader } from '../../incidents/index.js'
import { chatAlertOf } from '../delivery.js'
import { slackMessage } from '../../destinations/index.js'
import { findAlert } from '../../alerts/index.js'
import { emailsOf } from '../../oncall/index.js'
import { alertControls, incidentCard } from './cards.js'

export interface RenderDeps {
  latestAnalysis: LatestAnalysisReader
  productUrl: string
}

/** The incident's message as it is now; undefined when the incident is gone. */
export async function renderIncident(db: Executor, deps: RenderDeps, organizationId: string, incidentId: string, channelName?: string) {
  const incident = await findIncident(db, organizationId, incidentId)
  if (!incident) return undefined
  const roles = await incidentRoles(db, organizationId, incident.id)
  const responders = await incidentResponders(db, organizationId, incident.id)
  const state = {
    id: incident.id,
    reference: `INC-${incident.number}`,
    title: incident.title,
    severity: incident.severity,
    status: incident.status,
    commander: roles.find((role) => role.role === 'commander')?.email ?? null,
    responders: responders.map((responder) => responder.email),
    alertCount: incident.alertCount ?? 0,
    url: `${deps.productUrl}/api/v1/organizations/${organizationId}/incidents/${incident.id}`,
    ...(channelName ? { channelName } : {}),
    ...(await shownFieldsOf(db, organizationId, incident)),
  }
  return { incident, state, ...incidentCard(state) }
}

/** The page message about an alert as it is now: the alert, its analysis, who acknowledged it, its buttons. */
export async function renderAlert(db: Executor, deps: RenderDeps, organizationId: string, alertId: string) {
  const alert = await findAlert(db, organizationId, alertId)
  if (!alert) return undefined
  const chatAlert = await chatAlertOf(db, deps, organizationId, alert)
  const message = slackMessage(chatAlert)
  const acknowledgedBy = alert.acknowledgedBy ? ((await emailsOf(db, [alert.acknowledgedBy])).get(alert.acknowledgedBy) ?? null) : null
  const inIncident = chatAlert.incident !== undefined
  return {
    text: message.text,
    blocks: [...message.blocks, ...alertControls({ alertId: alert.id, status: alert.status, acknowledgedBy, inIncident })],
  }
}
