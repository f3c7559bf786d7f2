import {
  AnalyzerError,
  type DeployEvidence,
  type DraftIncident,
  type IncidentAnalyzer,
  type IncidentContext,
  type RcaDraft,
  type RcaDraftContext,
} from './types.js'

/** Below this, a past incident's title is too unlike to count as "the same problem". */
const SIMILAR_ENOUGH = 0.3

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

/** How an incident not resolved yet reads: "still in triage", "still open", "still investigating". */
const STILL: Record<string, string> = { triage: 'in triage', identified: 'with its cause identified' }

/** Timeline events whose detail says who: shown beside them. */
const PEOPLE_EVENTS = new Set(['paged', 'alert_acknowledged'])

/** Who was paged and who acknowledged, and how long after the incident began; empty when unknown. */
function responders(incident: IncidentContext, people: DraftIncident['people']): string {
  if (!people) return ''
  const paged =
    people.paged.length > 0 ? ` Paged: ${people.paged.map((page) => `${page.email} (${page.channels.join(', ')})`).join(', ')}.` : ''
  const first = people.acknowledged[0]
  const acknowledged = first
    ? ` Acknowledged by ${first.email} ${lapse(incident.startedAt, new Date(first.at))} after it began.`
    : people.paged.length > 0
      ? ' Nobody acknowledged the page.'
      : ''
  return `${paged}${acknowledged}`
}

/** A lapse as a person says it: "less than a minute", "4 minutes". */
function lapse(from: Date, to: Date): string {
  return to.getTime() - from.getTime() < 60_000 ? 'less than a minute' : minutes(minutesBetween(from, to))
}

function minutes(value: number): string {
  return value === 1 ? '1 minute' : `${value} minutes`
}

/**
 * The built-in RCA drafter: no network, no model. It writes a post-mortem draft from the record
 * (the deploys before the incidents, their analyses, resolved incidents alike), so the product
 * drafts one out of the box; the model provider replaces it when OPENAI_API_KEY is set.
 * Investigations have their own offline planner (plugins/insights/src/investigation).
 */
export function createOfflineAnalyzer(): IncidentAnalyzer {
  return {
    provider: 'offline',
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
  // The caller drafts only an RCA that links an incident (insights/rcas/generate.ts).
  if (context.incidents.length === 0) throw new AnalyzerError('an RCA draft is written from at least one incident', false)
  const incidents = [...context.incidents].sort((a, b) => a.incident.startedAt.getTime() - b.incident.startedAt.getTime())
  const services = [...new Set(incidents.map(({ incident }) => incident.service).filter((service): service is string => service !== null))]
  const first = incidents[0]!.incident
  const suspect = suspectOf(first, context.deploys, services)
  const named = (incident: IncidentContext) => (incident.reference ? `${incident.reference} "${incident.title}"` : `"${incident.title}"`)
  const titles = incidents.map(({ incident }) => `${named(incident)} (${incident.priority})`).join(', ')
  const where = services.length > 0 ? ` on ${services.join(', ')}` : ''

  const summary = `${incidents.length === 1 ? 'One incident' : `${incidents.length} incidents`}${where}: ${titles}, beginning at ${first.startedAt.toISOString()}.`

  const impact = incidents
    .map(({ incident, timeline, people }) => {
      const resolved = timeline.find((entry) => entry.type === 'resolved')
      const duration = resolved
        ? `resolved after ${minutes(minutesBetween(incident.startedAt, new Date(resolved.at)))}`
        : `still ${STILL[incident.status] ?? incident.status}`
      const occurrences = incident.occurrences > 1 ? `, ${incident.occurrences} occurrences` : ''
      const name = incident.reference ? `${incident.reference} ${incident.title}` : incident.title
      return `- ${name} (${incident.priority}${incident.service ? `, ${incident.service}` : ''}): ${duration}${occurrences}.${responders(incident, people)}`
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
    if (analysis?.rootCause) causes.push(`The analysis of ${named(incident)} found: ${analysis.rootCause}`)
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
      timeline.map((entry) => ({
        at: entry.at,
        text: `${incident.reference ?? incident.title}: ${entry.type.replaceAll('_', ' ')}${PEOPLE_EVENTS.has(entry.type) && entry.detail ? ` (${entry.detail})` : ''}`,
      })),
    ),
  ].sort((a, b) => a.at.localeCompare(b.at))
  const timeline = events.map((event) => `- ${event.at} ${event.text}`).join('\n')

  return { summary, rootCause: causes.join(' '), impact, timeline, suspectedDeployId: suspect?.id ?? null, usage }
}
