import type { DeployEvidence, DraftIncident, RcaDraftContext, SimilarIncident } from '@svc/ai'
import type { Executor } from '@svc/db'
import { deploysBeforeIncident, incidentContext, incidentTimeline, similarResolvedIncidents } from '../queries/evidence.js'
import { latestAnalysis, listLinks, type RcaRow } from '../queries/rcas.js'

/**
 * What an RCA draft is written from: each linked incident with its timeline and latest
 * analysis, the deploys in the window before the first of them, and resolved incidents that look
 * like any of them (the linked ones excepted).
 */
export async function draftContext(db: Executor, rca: RcaRow): Promise<RcaDraftContext> {
  const organizationId = rca.organizationId
  const links = await listLinks(db, organizationId, rca.id)
  const incidents: DraftIncident[] = []
  for (const link of links) {
    const key = { organizationId, sourceProduct: link.sourceProduct as 'alerting', incidentId: link.incidentId }
    const incident = await incidentContext(db, key)
    if (!incident) continue
    const [timeline, analysis] = await Promise.all([
      incidentTimeline(db, organizationId, incident),
      latestAnalysis(db, organizationId, link.sourceProduct, link.incidentId),
    ])
    incidents.push({ incident, timeline, analysis: analysis ?? null })
  }
  const first = [...incidents].sort((a, b) => a.incident.startedAt.getTime() - b.incident.startedAt.getTime())[0]
  const deploys: DeployEvidence[] = first ? await deploysBeforeIncident(db, organizationId, first.incident) : []
  const linked = new Set(links.map((link) => link.incidentId))
  const similar = new Map<string, SimilarIncident>()
  for (const { incident } of incidents) {
    for (const past of await similarResolvedIncidents(db, organizationId, incident)) {
      if (!linked.has(past.incidentId) && !similar.has(past.incidentId)) similar.set(past.incidentId, past)
    }
  }
  return {
    title: rca.title,
    incidents,
    deploys,
    similarIncidents: [...similar.values()].sort((a, b) => b.similarity - a.similarity).slice(0, 5),
  }
}
