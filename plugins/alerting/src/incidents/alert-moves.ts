import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import type { JobQueue } from '@svc/jobs'
import type { AlertEventSubscriber, BusEvent } from '../alerts/index.js'
import { timelineEntry } from './common.js'
import { milestonesAfter } from './model.js'
import { resolveOnStatusPages } from './status-pages.js'
import {
  addTimeline,
  findIncident,
  incidentsResolvedByAlertsOf,
  settleIncidentAlerts,
  triagedIncidentsOf,
  updateIncident,
} from './queries.js'

/** How an alert moved, as its timeline row says: the channel of a person, or the source. */
function channelOf(event: BusEvent): string {
  const data = (event.data ?? {}) as { via?: unknown; source?: unknown }
  if (typeof data.via === 'string') return data.via
  if (typeof data.source === 'string') return 'source'
  return event.actorUserId ? 'api' : 'source'
}

/**
 * Someone acknowledged one of the incident's alerts (a link, SMS, voice, Slack, the API, the
 * source): somebody is on it, so the incident leaves triage, acknowledged then, and its other
 * alerts stop paging, as if the incident had been acknowledged itself.
 */
async function acknowledgeIncidentsOf(trx: Executor, event: BusEvent): Promise<void> {
  for (const incident of await triagedIncidentsOf(trx, event.organizationId, event.alertId)) {
    await updateIncident(trx, event.organizationId, incident.id, {
      status: 'investigating',
      ...milestonesAfter(incident, 'investigating', event.createdAt),
    })
    const entry = (kind: string, data: Record<string, unknown>) =>
      timelineEntry(event.organizationId, incident.id, event.actorUserId, kind, data)
    const timeline = [entry('status_changed', { from: 'triage', to: 'investigating', alertId: event.alertId, via: channelOf(event) })]
    const settled = await settleIncidentAlerts(trx, event.organizationId, incident.id, 'acknowledged', event.actorUserId)
    if (settled.length > 0) timeline.push(entry('alerts_acknowledged', { alertIds: settled }))
    await addTimeline(trx, timeline)
  }
}

/** The last alert of an incident that alerts opened resolved: the incident resolves with it. */
async function resolveIncidentsOf(trx: Executor, jobs: JobQueue, event: BusEvent): Promise<void> {
  for (const incident of await incidentsResolvedByAlertsOf(trx, event.organizationId, event.alertId)) {
    await updateIncident(trx, event.organizationId, incident.id, {
      status: 'resolved',
      ...milestonesAfter(incident, 'resolved', event.createdAt),
      ...(incident.snoozedUntil ? { snoozedUntil: null } : {}),
    })
    const entry = (kind: string, data: Record<string, unknown>) =>
      timelineEntry(event.organizationId, incident.id, event.actorUserId, kind, data)
    const timeline = [
      entry('status_changed', {
        from: incident.status,
        to: 'resolved',
        reason: 'its alerts resolved',
        alertId: event.alertId,
        via: channelOf(event),
      }),
    ]
    // Responder requests still open are answered by the resolution.
    const settled = await settleIncidentAlerts(trx, event.organizationId, incident.id, 'resolved', event.actorUserId)
    if (settled.length > 0) timeline.push(entry('alerts_resolved', { alertIds: settled }))
    const [resolution] = await addTimeline(trx, timeline)
    const after = await findIncident(trx, event.organizationId, incident.id)
    if (after) await resolveOnStatusPages(jobs, trx, { ...after, organizationId: event.organizationId }, resolution!.id, event.actorUserId)
  }
}

/**
 * The incident follows its alerts (decision 0019, "State flows both ways"), on the alert event
 * bus: an alert acknowledged from any channel acknowledges an incident still in triage, and an
 * incident that alerts opened resolves when the last of them resolves (it reopens by the existing
 * rule when one fires again). A move the incident made itself (its status settling its alerts,
 * `{incidentId}` in the event) is not followed back.
 */
export function alertMovesSubscriber({ jobs }: { jobs: JobQueue }): AlertEventSubscriber {
  return {
    // Only acknowledgements and resolutions: a new alert is correlation's.
    wantsCreated: () => sql`false`,
    async handle(trx, events) {
      for (const event of events) {
        if (event.type === 'created' || (event.data as { incidentId?: unknown } | null)?.incidentId) continue
        if (event.type === 'acknowledged') await acknowledgeIncidentsOf(trx, event)
        else await resolveIncidentsOf(trx, jobs, event)
      }
      return false
    },
    wake: () => {},
  }
}
