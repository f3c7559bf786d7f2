import type { DeployEvidence, DraftIncident, RcaDraftContext, SimilarIncident, TimelineEntry } from '@svc/ai'
import type { Executor } from '@svc/db'
import { incidentIdOfAlert, incidentRecord, type IncidentRecord } from '@svc/plugin-alerting'
import { statusIncidentsAbout } from '@svc/plugin-statuspages'
import {
  deploysBeforeIncident,
  incidentContext,
  incidentOfAlerting,
  incidentTimeline,
  similarResolvedIncidents,
} from '../queries/evidence.js'
import { latestAnalysis, type LinkRow, type RcaRow } from '../queries/rcas.js'

/** Why a draft is refused, or fails, when the document links no incident. */
export const NOTHING_LINKED =
  'no incident is linked to this RCA: link the incident it explains (POST …/rcas/:rcaId/incidents with an incident INC-n, an alert or a status page incident), then generate the draft'

/**
 * What an RCA draft is written from: each incident its links name, once, with its timeline, its
 * people and its latest completed analysis; the deploys in the window before the first of them;
 * resolved incidents that look like any of them (the linked ones excepted). The incident is the
 * subject (decision 0019, "One incident everywhere"): a linked alert that is in an incident of
 * alerting stands for that incident, and a status page incident linked to one of those incidents is
 * part of it, so the same outage is never counted twice.
 */
export async function draftContext(db: Executor, rca: RcaRow, links: LinkRow[]): Promise<RcaDraftContext> {
  const organizationId = rca.organizationId
  const incidents = new Map<string, IncidentRecord>()
  const alerts: string[] = []
  const statusIncidents: string[] = []
  for (const link of links) {
    if (link.sourceProduct === 'statuspages') statusIncidents.push(link.incidentId)
    if (link.sourceProduct !== 'alerting') continue
    const incidentId = link.kind === 'incident' ? link.incidentId : await incidentIdOfAlert(db, organizationId, link.incidentId)
    if (!incidentId) {
      alerts.push(link.incidentId)
      continue
    }
    const record = incidents.get(incidentId) ?? (await incidentRecord(db, organizationId, incidentId))
    if (record) incidents.set(incidentId, record)
  }
  // The status page incidents about each incident (opened by its updates, following its alerts, or put in it by correlation).
  const partOfAnIncident = new Set<string>()
  for (const record of incidents.values()) {
    const about = { incidentId: record.id, alertIds: record.alerts.map((alert) => alert.id), statusIncidentIds: record.statusIncidentIds }
    for (const statusIncident of await statusIncidentsAbout(db, organizationId, about)) partOfAnIncident.add(statusIncident.id)
  }

  const drafted: DraftIncident[] = []
  for (const record of incidents.values()) drafted.push(await incidentDraft(db, organizationId, record))
  const others = [
    ...[...new Set(alerts)].map((incidentId) => ({ sourceProduct: 'alerting' as const, incidentId })),
    ...[...new Set(statusIncidents)]
      .filter((incidentId) => !partOfAnIncident.has(incidentId))
      .map((incidentId) => ({ sourceProduct: 'statuspages' as const, incidentId })),
  ]
  for (const key of others) {
    const incident = await incidentContext(db, { organizationId, ...key })
    if (!incident) continue
    const [timeline, analysis] = await Promise.all([
      incidentTimeline(db, organizationId, incident),
      latestAnalysis(db, organizationId, key.sourceProduct, [key.incidentId]),
    ])
    drafted.push({ incident, timeline, analysis: analysis ?? null })
  }

  const first = [...drafted].sort((a, b) => a.incident.startedAt.getTime() - b.incident.startedAt.getTime())[0]
  const deploys: DeployEvidence[] = first ? await deploysBeforeIncident(db, organizationId, first.incident) : []
  const linked = new Set([
    ...links.map((link) => link.incidentId),
    ...[...incidents.values()].flatMap((record) => [record.id, ...record.alerts.map((alert) => alert.id)]),
  ])
  const similar = new Map<string, SimilarIncident>()
  for (const { incident } of drafted) {
    for (const past of await similarResolvedIncidents(db, organizationId, incident)) {
      if (!linked.has(past.incidentId) && !similar.has(past.incidentId)) similar.set(past.incidentId, past)
    }
  }
  return {
    title: rca.title,
    incidents: drafted,
    deploys,
    similarIncidents: [...similar.values()].sort((a, b) => b.similarity - a.similarity).slice(0, 5),
  }
}

/**
 * An incident of alerting as the draft tells it: its own timeline (a status change named by the
 * status it reached), who was paged and who acknowledged, and the latest completed analysis of
 * the incident or of any of its alerts.
 */
async function incidentDraft(db: Executor, organizationId: string, record: IncidentRecord): Promise<DraftIncident> {
  const analysis = await latestAnalysis(db, organizationId, 'alerting', [record.id, ...record.alerts.map((alert) => alert.id)])
  const entries: TimelineEntry[] = record.timeline.map((entry) => {
    const data = (entry.data ?? {}) as { to?: unknown; via?: unknown; reason?: unknown }
    const type = entry.kind === 'status_changed' && typeof data.to === 'string' ? data.to : entry.kind
    const by = [entry.author, typeof data.via === 'string' ? `via ${data.via}` : null, typeof data.reason === 'string' ? data.reason : null]
    return { type, at: entry.createdAt.toISOString(), detail: entry.body ?? (by.filter(Boolean).join(', ') || null) }
  })
  const paged = record.paged.map((page) => ({ email: page.email, channels: page.channels, at: page.at.toISOString() }))
  const acknowledged = record.acknowledged.map((ack) => ({ email: ack.email, at: ack.at.toISOString() }))
  const timeline = [
    ...entries,
    ...paged.map((page) => ({ type: 'paged', at: page.at, detail: `${page.email} (${page.channels.join(', ')})` })),
    ...acknowledged.map((ack) => ({ type: 'alert_acknowledged', at: ack.at, detail: ack.email })),
  ].sort((a, b) => a.at.localeCompare(b.at))
  return { incident: incidentOfAlerting(record), timeline, analysis: analysis ?? null, people: { paged, acknowledged } }
}
