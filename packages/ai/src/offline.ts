import type {
  DeployEvidence,
  IncidentAnalysis,
  IncidentAnalyzer,
  IncidentContext,
  EvidenceSource,
  RcaDraft,
  RcaDraftContext,
  Severity,
  SimilarIncident,
} from './types.js'

/** Severity from priority, one level up for an incident that keeps recurring. */
const SEVERITY_OF_PRIORITY = new Map<string, Severity>([
  ['P1', 'critical'],
  ['P2', 'high'],
  ['P3', 'medium'],
  ['P4', 'low'],
  ['P5', 'low'],
])
const ESCALATING: Record<Severity, Severity> = { low: 'medium', medium: 'high', high: 'critical', critical: 'critical' }
const RECURRING_OCCURRENCES = 10
/** Below this, a past incident's title is too unlike to count as "the same problem". */
const SIMILAR_ENOUGH = 0.3

function severityOf(incident: IncidentContext): Severity {
  const base = SEVERITY_OF_PRIORITY.get(incident.priority) ?? 'medium'
  return incident.occurrences >= RECURRING_OCCURRENCES ? ESCALATING[base] : base
}

/** The deploy most likely at fault: of the incident's service, the latest before it; a failed one first. */
function suspectOf(
  incident: Pick<IncidentContext, 'service'>,
  deploys: DeployEvidence[],
  services: Array<string | null> = [incident.service],
): DeployEvidence | undefined {
  const known = services.filter((service): service is string => service !== null)
  const candidates = deploys.filter((deploy) => deploy.minutesBeforeIncident >= 0 && (known.length === 0 || known.includes(deploy.service)))
  const byRecency = [...candidates].sort((a, b) => a.minutesBeforeIncident - b.minutesBeforeIncident)
  return byRecency.find((deploy) => deploy.status === 'failure' || deploy.status === 'error') ?? byRecency[0]
}

function describeDeploy(deploy: DeployEvidence): string {
  const version = deploy.version ? ` ${deploy.version}` : ''
  const commit = deploy.commitSha ? ` (commit ${deploy.commitSha.slice(0, 12)})` : ''
  const environment = deploy.environment ? ` to ${deploy.environment}` : ''
  return `deploy${version} of ${deploy.service}${commit}${environment}`
}

function minutes(value: number): string {
  return value === 1 ? '1 minute' : `${value} minutes`
}

/**
 * The built-in analyzer: no network, no model. It correlates the deploys that preceded the
 * incident, recalls resolved incidents that look alike, and derives severity by rule, so the
 * product explains an incident out of the box. Its reasoning is deliberately plain; the model
 * provider replaces it when OPENAI_API_KEY is set.
 */
export function createOfflineAnalyzer(): IncidentAnalyzer {
  return {
    provider: 'offline',
    async analyzeIncident(incident: IncidentContext, evidence: EvidenceSource): Promise<IncidentAnalysis> {
      const [deploys, similarIncidents, timeline] = await Promise.all([
        evidence.recentDeploys(),
        evidence.similarIncidents(),
        evidence.timeline(),
      ])
      const suspect = suspectOf(incident, deploys)
      const precedent: SimilarIncident | undefined = similarIncidents.find((past) => past.similarity >= SIMILAR_ENOUGH)
      const where = incident.service ? ` on ${incident.service}` : ''
      const recurrence = incident.occurrences > 1 ? ` It has occurred ${incident.occurrences} times.` : ''

      const causes: string[] = []
      const recommendations: string[] = []
      if (suspect) {
        const failed = suspect.status === 'failure' || suspect.status === 'error' ? ', which failed,' : ''
        causes.push(
          `Likely caused by the ${describeDeploy(suspect)}${failed} finished ${minutes(suspect.minutesBeforeIncident)} before the incident began.`,
        )
        recommendations.push(
          `Roll back ${suspect.service}${suspect.version ? ` to the version before ${suspect.version}` : ''}, or revert ${suspect.commitSha ? `commit ${suspect.commitSha.slice(0, 12)}` : 'the change'}, and watch whether the alert resolves.`,
        )
        recommendations.push(`Compare ${suspect.service}'s error rate and latency before and after the deploy.`)
      }
      if (precedent) {
        const earlier = precedent.rootCause ? ` Its root cause then: ${precedent.rootCause}` : ''
        causes.push(`It resembles the resolved incident "${precedent.title}" (similarity ${precedent.similarity.toFixed(2)}).${earlier}`)
        recommendations.push(`Review how "${precedent.title}" was resolved and whether its fix still holds.`)
      }
      if (causes.length === 0) {
        causes.push(
          `No deploy${where} preceded it and no similar incident was resolved before: the cause is outside the recorded changes (a dependency, load or infrastructure).`,
        )
        recommendations.push(
          `Check the health of ${incident.service ?? 'the affected service'}'s dependencies and recent infrastructure changes.`,
        )
      }
      recommendations.push('Record what you find on the incident so the next analysis can use it.')

      return {
        summary: `${incident.priority} incident "${incident.title}"${where} began at ${incident.startedAt.toISOString()}.${recurrence}`,
        rootCause: causes.join(' '),
        recommendations,
        severity: severityOf(incident),
        suspectedDeployId: suspect?.id ?? null,
        evidence: { deploys, similarIncidents, timeline },
        usage: { provider: 'offline', model: 'offline', promptTokens: 0, completionTokens: 0 },
      }
    },
    async draftRca(context: RcaDraftContext): Promise<RcaDraft> {
      return draftOffline(context)
    },
  }
}

const minutesBetween = (from: Date, to: Date) => Math.max(0, Math.round((to.getTime() - from.getTime()) / 60_000))

/**
 * A post-mortem draft from the record alone: what happened (the incidents), what it touched
 * (services, durations, occurrences), why (the deploy before it, the analyses' findings, alike
 * incidents), and when (deploys and incident events in one timeline).
 */
function draftOffline(context: RcaDraftContext): RcaDraft {
  const usage = { provider: 'offline' as const, model: 'offline', promptTokens: 0, completionTokens: 0 }
  if (context.incidents.length === 0) {
    const empty = 'No incidents are linked to this RCA yet: link them, then generate the draft again.'
    return { summary: empty, rootCause: empty, impact: empty, timeline: empty, suspectedDeployId: null, usage }
  }
  const incidents = [...context.incidents].sort((a, b) => a.incident.startedAt.getTime() - b.incident.startedAt.getTime())
  const services = [...new Set(incidents.map(({ incident }) => incident.service).filter((service): service is string => service !== null))]
  const first = incidents[0]!.incident
  const suspect = suspectOf(first, context.deploys, services)
  const titles = incidents.map(({ incident }) => `"${incident.title}" (${incident.priority})`).join(', ')
  const where = services.length > 0 ? ` on ${services.join(', ')}` : ''

  const summary = `${incidents.length === 1 ? 'One incident' : `${incidents.length} incidents`}${where}: ${titles}, beginning at ${first.startedAt.toISOString()}.`

  const impact = incidents
    .map(({ incident, timeline }) => {
      const resolved = timeline.find((entry) => entry.type === 'resolved')
      const duration = resolved
        ? `resolved after ${minutes(minutesBetween(incident.startedAt, new Date(resolved.at)))}`
        : `still ${incident.status}`
      const occurrences = incident.occurrences > 1 ? `, ${incident.occurrences} occurrences` : ''
      return `- ${incident.title} (${incident.priority}${incident.service ? `, ${incident.service}` : ''}): ${duration}${occurrences}.`
    })
    .join('\n')

  const causes: string[] = []
  if (suspect) {
    const failed = suspect.status === 'failure' || suspect.status === 'error' ? ', which failed,' : ''
    causes.push(
      `The ${describeDeploy(suspect)}${failed} finished ${minutes(suspect.minutesBeforeIncident)} before the first incident began.`,
    )
  }
  for (const { incident, analysis } of incidents) {
    if (analysis?.rootCause) causes.push(`The analysis of "${incident.title}" found: ${analysis.rootCause}`)
  }
  const precedent = context.similarIncidents.find((past) => past.similarity >= SIMILAR_ENOUGH)
  if (precedent)
    causes.push(
      `A resolved incident looked alike: "${precedent.title}"${precedent.rootCause ? ` (its root cause: ${precedent.rootCause})` : ''}.`,
    )
  if (causes.length === 0)
    causes.push('No deploy preceded the incidents and no analysis found a cause: write what the investigation established.')

  const events = [
    ...context.deploys.map((deploy) => ({ at: deploy.at, text: `${describeDeploy(deploy)} (${deploy.status})` })),
    ...incidents.flatMap(({ incident, timeline }) =>
      timeline.map((entry) => ({ at: entry.at, text: `${incident.title}: ${entry.type.replace('_', ' ')}` })),
    ),
  ].sort((a, b) => a.at.localeCompare(b.at))
  const timeline = events.map((event) => `- ${event.at} ${event.text}`).join('\n')

  return { summary, rootCause: causes.join(' '), impact, timeline, suspectedDeployId: suspect?.id ?? null, usage }
}
