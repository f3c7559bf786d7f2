import type { AgentStep, AgentTool, Severity } from '@svc/ai'
import { clippedOutput } from '@svc/ai'
import { SUSPECT_THRESHOLD, type ScoredDeploy } from './deploy-scoring.js'
import type { CauseCategory, Findings } from './findings.js'
import type { Gathered, SimilarPast } from './tools.js'
import type { Subject } from './subject.js'

// The offline planner (decision 0021, "The offline planner"): no model, no network. It calls the
// investigator's tools in a fixed order (the dependency map first, since deploys are weighed by
// it; then the alerts, deploys, configuration changes, checks, status components and past
// incidents) and scores what they return into the same findings a model gives.

/** The order the planner calls the tools in, and why, as each step records it. */
export const PLAN: Array<[tool: string, reasoning: string]> = [
  ['get_service_dependencies', 'The dependency map first: deploys and failures of what the failing services depend on count too.'],
  ['get_alert_timelines', 'The alerts: which services failed first, what their titles and labels say.'],
  [
    'get_deploys',
    'Deploys before the onset are the commonest cause; each is scored by time, relation, environment and whether it was replaced.',
  ],
  ['get_config_changes', 'Configuration changes can break a service without a deploy.'],
  ['get_check_results', 'Checks per region tell an outage everywhere from a network path or provider in some regions.'],
  ['get_status_components', 'What the status page showed, and when.'],
  ['get_similar_incidents', 'Resolved incidents that look alike, with the cause found then.'],
]

const CAPACITY =
  /\b(cpu|memory|oom|oomkill\w*|out of memory|disk (?:full|space|usage|pressure)|disk|saturat\w*|throttl\w*|queue depth|backlog|connection pool|pool exhausted|too many connections|load average|heap|gc pause\w*|quota|capacity|evict\w*|replica(?:tion)? lag|file descriptors|ulimit|autoscal\w*|hpa)\b/i
const EXTERNAL =
  /\b(dns|nxdomain|servfail|certificate|tls handshake|ssl|third[- ]party|cdn|stripe|twilio|sendgrid|paypal|cloudflare|akamai|fastly|aws|gcp|azure|s3|bgp|isp|upstream provider|provider outage|vendor)\b/i
const DEPENDENCY_WORDS =
  /\b(upstream|downstream dependency|dependency|connection refused|timed? ?out (?:calling|connecting)|econnrefused|circuit breaker|503 from)\b/i
/** A category a past incident alike was put in counts this much when nothing else decides. */
const PRECEDENT_WEIGHT = 0.35
const SIMILAR_ENOUGH = 0.5
const SEVERITY_OF_PRIORITY: Record<string, Severity> = { P1: 'critical', P2: 'high', P3: 'medium', P4: 'low', P5: 'low' }
const ESCALATING: Record<Severity, Severity> = { low: 'medium', medium: 'high', high: 'critical', critical: 'critical' }
const RECURRING_OCCURRENCES = 10

export function severityOf(subject: Pick<Subject, 'priority' | 'occurrences'>): Severity {
  const base = SEVERITY_OF_PRIORITY[subject.priority] ?? 'medium'
  return subject.occurrences >= RECURRING_OCCURRENCES ? ESCALATING[base] : base
}

export function describeDeploy(deploy: Pick<ScoredDeploy, 'kind' | 'version' | 'service' | 'commitSha' | 'environment'>): string {
  const what = deploy.kind === 'config' ? 'configuration change' : deploy.kind === 'rollback' ? 'rollback' : 'deploy'
  const version = deploy.version ? ` ${deploy.version}` : ''
  const commit = deploy.commitSha ? ` (commit ${deploy.commitSha.slice(0, 12)})` : ''
  const environment = deploy.environment ? ` to ${deploy.environment}` : ''
  return `${what}${version} of ${deploy.service}${commit}${environment}`
}

const minutes = (value: number) => (value === 1 ? '1 minute' : `${value} minutes`)

/** Runs the plan: every tool in order, each call recorded as a step. */
export async function runPlanner(subject: Subject, tools: AgentTool[], gathered: Gathered, onStep: (step: AgentStep) => Promise<void>) {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  for (const [name, reasoning] of PLAN) {
    const tool = byName.get(name)
    if (!tool) continue
    const input = name === 'get_deploys' || name === 'get_config_changes' ? { windowMinutes: null } : {}
    const output = await tool.run(input)
    await onStep({ tool: name, input, output: clippedOutput(output), reasoning })
  }
  const findings = plannedFindings(subject, gathered)
  await onStep({ tool: null, input: {}, output: findings, reasoning: 'Scored what the tools returned.' })
  return findings
}

interface Candidate {
  category: CauseCategory
  score: number
  statement: string
  service: string | null
  evidence: Findings['evidence']
  recommendations: string[]
}

function textOf(subject: Subject): string {
  return subject.alerts
    .flatMap((alert) => [
      alert.title,
      alert.description ?? '',
      ...Object.entries(alert.labels).map(([key, value]) => `${key} ${String(value)}`),
    ])
    .concat(subject.title, subject.description ?? '')
    .join('\n')
}

function matchedTerms(pattern: RegExp, text: string): string[] {
  const global = new RegExp(pattern.source, 'gi')
  return [...new Set([...text.matchAll(global)].map((match) => match[0].toLowerCase()))].slice(0, 4)
}

const alertResources = (subject: Subject, services?: string[]) =>
  subject.alerts
    .filter((alert) => !services || (alert.service !== null && services.includes(alert.service)))
    .slice(0, 5)
    .map((alert) => ({ type: 'alert' as const, id: alert.id }))

function changeCandidate(change: ScoredDeploy): Candidate {
  const failed = change.status === 'failure' || change.status === 'error' ? ', which failed,' : ''
  const category: CauseCategory = change.kind === 'config' ? 'configuration' : 'deploy'
  const through = change.relation === 'dependency' ? `, which a failing service depends on,` : ''
  const recommendations =
    change.kind === 'config'
      ? [`Revert the configuration change to ${change.service} and watch whether the alerts resolve.`]
      : [
          `Roll back ${change.service}${change.version ? ` to the version before ${change.version}` : ''}, or revert ${change.commitSha ? `commit ${change.commitSha.slice(0, 12)}` : 'the change'}, and watch whether the alert resolves.`,
          `Compare ${change.service}'s error rate and latency before and after the deploy.`,
        ]
  return {
    category,
    score: change.score,
    statement: `Likely caused by the ${describeDeploy(change)}${failed}${through} finished ${minutes(change.minutesBeforeOnset)} before the incident began.`,
    service: change.service,
    evidence: [{ claim: `The ${describeDeploy(change)}: ${change.reasons.join('; ')}.`, resources: [{ type: 'deploy', id: change.id }] }],
    recommendations,
  }
}

function dependencyCandidate(subject: Subject, gathered: Gathered, text: string): Candidate | undefined {
  const dependsOn = gathered.dependencies?.dependsOn ?? []
  const dependents = gathered.dependencies?.dependents ?? []
  // A failing service that another failing service depends on: the root is the one nothing failing depends on.
  const failing = subject.services
  const roots = failing.filter((service) =>
    (gathered.dependencies?.edges ?? []).some((edge) => edge.dependsOn === service && failing.includes(edge.service)),
  )
  if (roots.length > 0) {
    const firstSeen = (service: string) =>
      Math.min(...subject.alerts.filter((alert) => alert.service === service).map((alert) => alert.onset.getTime()))
    const root = [...roots].sort((a, b) => firstSeen(a) - firstSeen(b))[0]!
    const affected = failing.filter((service) => service !== root)
    const first = firstSeen(root) <= Math.min(...subject.alerts.map((alert) => alert.onset.getTime()))
    return {
      category: 'dependency',
      score: first ? 0.7 : 0.6,
      statement: `${root} is failing and ${affected.join(', ')} depend${affected.length === 1 ? 's' : ''} on it${first ? '; it failed first' : ''}: the failures spread from ${root}.`,
      service: root,
      evidence: [
        {
          claim: `${root} failed${first ? ' first' : ''}, and failing services depend on it.`,
          resources: [...alertResources(subject, [root]), { type: 'service', id: root }],
        },
      ],
      recommendations: [
        `Work on ${root} first: the other failures follow from it.`,
        `Check ${root}'s health, saturation and its own recent changes.`,
      ],
    }
  }
  const named = dependsOn.filter((service) => text.toLowerCase().includes(service.toLowerCase()))
  const words = matchedTerms(DEPENDENCY_WORDS, text)
  if (named.length > 0 || (words.length > 0 && dependsOn.length > 0)) {
    const root = named[0] ?? dependsOn[0]!
    return {
      category: 'dependency',
      score: named.length > 0 ? 0.55 : 0.4,
      statement: `The alerts point at ${root}, which ${subject.services.join(', ') || 'the failing service'} depends on${words.length > 0 ? ` (${words.join(', ')})` : ''}.`,
      service: root,
      evidence: [
        {
          claim: `The alerts name ${root} or describe a failing dependency.`,
          resources: [...alertResources(subject), { type: 'service', id: root }],
        },
      ],
      recommendations: [`Check ${root}'s health and whether it is failing for its other dependents too.`],
    }
  }
  if (dependents.length === 0 && words.length > 0)
    return {
      category: 'dependency',
      score: 0.3,
      statement: `The alerts describe a failing dependency (${words.join(', ')}), though the dependency map does not name it.`,
      service: null,
      evidence: [{ claim: `The alerts' text: ${words.join(', ')}.`, resources: alertResources(subject) }],
      recommendations: ['Find the dependency the errors name and record it in the service dependency map.'],
    }
  return undefined
}

function capacityCandidate(subject: Subject, text: string): Candidate | undefined {
  const terms = matchedTerms(CAPACITY, text)
  if (terms.length === 0) return undefined
  const service = subject.services[0] ?? null
  return {
    category: 'capacity',
    score: Math.min(0.7, 0.45 + 0.08 * terms.length),
    statement: `The alerts describe exhausted resources (${terms.join(', ')})${service ? ` on ${service}` : ''}, with no change before it to blame.`,
    service,
    evidence: [{ claim: `The alerts' titles and labels: ${terms.join(', ')}.`, resources: alertResources(subject) }],
    recommendations: [
      `Add capacity to ${service ?? 'the service'} (scale out, raise the limit) to stop the bleeding.`,
      'Find what drove the load: traffic, a batch job, a slow query, a leak.',
    ],
  }
}

function externalCandidate(subject: Subject, gathered: Gathered, text: string): Candidate | undefined {
  const checks = gathered.checks ?? []
  const failing = checks.filter((check) => check.failures > 0 && check.failures >= check.runs / 2)
  const passing = checks.filter((check) => check.failures === 0)
  const terms = matchedTerms(EXTERNAL, text)
  if (failing.length > 0 && passing.length > 0) {
    const regions = failing.map((check) => check.region)
    return {
      category: 'external',
      score: 0.6 + (terms.length > 0 ? 0.1 : 0),
      statement: `Checks fail from ${regions.join(', ')} but pass from ${passing.map((check) => check.region).join(', ')}: a network path or provider between those regions and the service, not the service itself.`,
      service: null,
      evidence: [
        {
          claim: `Check results per region around the onset.`,
          resources: [...new Set(checks.map((check) => check.checkId))].map((id) => ({ type: 'check' as const, id })),
        },
      ],
      recommendations: [
        `Check the network path, CDN and DNS for ${regions.join(', ')}.`,
        'Look at the providers’ status pages for those regions.',
      ],
    }
  }
  if (terms.length === 0) return undefined
  return {
    category: 'external',
    score: 0.5,
    statement: `The alerts point outside our services (${terms.join(', ')}): a provider or the network.`,
    service: null,
    evidence: [{ claim: `The alerts' text: ${terms.join(', ')}.`, resources: alertResources(subject) }],
    recommendations: ['Check the provider’s status page and fail over if it offers a second region or vendor.'],
  }
}

function precedentOf(similar: SimilarPast[]): SimilarPast | undefined {
  return similar.find((past) => past.similarity >= SIMILAR_ENOUGH)
}

/** The findings from what the tools gathered. */
export function plannedFindings(subject: Subject, gathered: Gathered): Findings {
  const changes = [...(gathered.deploys ?? []), ...(gathered.configChanges ?? [])].sort((a, b) => b.score - a.score)
  const suspects = changes.filter((change) => change.score >= SUSPECT_THRESHOLD)
  const text = textOf(subject)
  const candidates: Candidate[] = []
  if (suspects[0]) candidates.push(changeCandidate(suspects[0]))
  for (const candidate of [
    dependencyCandidate(subject, gathered, text),
    capacityCandidate(subject, text),
    externalCandidate(subject, gathered, text),
  ])
    if (candidate) candidates.push(candidate)
  const precedent = precedentOf(gathered.similar ?? [])
  const priorCategory = precedent?.category as CauseCategory | null | undefined
  if (priorCategory && priorCategory !== 'unknown') {
    const same = candidates.find((candidate) => candidate.category === priorCategory)
    if (same) same.score = Math.min(0.95, same.score + 0.1)
    else if (priorCategory !== 'deploy' && priorCategory !== 'configuration' && precedent)
      candidates.push({
        category: priorCategory,
        score: PRECEDENT_WEIGHT,
        statement: `The resolved ${precedent.kind} it most resembles had a ${priorCategory} cause; nothing recorded now contradicts that.`,
        service: null,
        evidence: [],
        recommendations: [],
      })
  }
  // A change scoring above the threshold decides: deploys are weighed heavily (the spec's rule).
  const best = suspects[0] ? candidates[0]! : [...candidates].sort((a, b) => b.score - a.score)[0]
  const where = subject.services.length > 0 ? ` on ${subject.services.join(', ')}` : ''
  const noChange = `No deploy or configuration change${where} or to what it depends on points at it: ${changes.length === 0 ? 'none was recorded in the hours before' : 'those recorded are too old, elsewhere or replaced'}.`

  const evidence: Findings['evidence'] = []
  const recommendations: string[] = []
  let probableCause: Findings['probableCause']
  if (best && best.score >= SUSPECT_THRESHOLD) {
    const confidence =
      best.category === 'deploy' || best.category === 'configuration' ? Math.min(0.95, 0.4 + 0.55 * best.score) : best.score
    probableCause = {
      category: best.category,
      confidence: Math.round(confidence * 100) / 100,
      statement: best.statement,
      service: best.service,
    }
    evidence.push(...best.evidence)
    recommendations.push(...best.recommendations)
  } else {
    probableCause = {
      category: 'unknown',
      confidence: 0.2,
      statement: `${noChange} Nothing else recorded (dependencies, capacity, checks) points at a cause.`,
      service: null,
    }
    recommendations.push(
      `Check the health of ${subject.services[0] ?? 'the affected service'}'s dependencies and recent infrastructure changes.`,
    )
  }
  if (suspects.length === 0 && probableCause.category !== 'unknown') probableCause.statement = `${probableCause.statement} ${noChange}`
  if (precedent) {
    const earlier = precedent.rootCause ? ` Its root cause then: ${precedent.rootCause}` : ''
    probableCause.statement = `${probableCause.statement} It resembles the resolved ${precedent.kind} "${precedent.title}" (similarity ${precedent.similarity.toFixed(2)}).${earlier}`
    evidence.push({
      claim: `A resolved ${precedent.kind} looks alike.`,
      resources: [
        { type: precedent.kind === 'incident' ? 'incident' : 'alert', id: precedent.id },
        ...precedent.rcas.map((rca) => ({ type: 'rca' as const, id: rca.id })),
      ],
    })
    recommendations.push(`Review how "${precedent.title}" was resolved and whether its fix still holds.`)
    for (const item of precedent.rcas
      .flatMap((rca) => rca.actionItems)
      .filter((item) => item.status !== 'done')
      .slice(0, 2))
      recommendations.push(`An action item of its RCA is still open: ${item.title}.`)
  }
  const ruledOut = changes.filter((change) => change.score < SUSPECT_THRESHOLD).slice(0, 3)
  if (ruledOut.length > 0)
    evidence.push({
      claim: `Ruled out: ${ruledOut.map((change) => `${describeDeploy(change)} (${change.reasons.at(-1)})`).join('; ')}.`,
      resources: ruledOut.map((change) => ({ type: 'deploy' as const, id: change.id })),
    })
  recommendations.push('Record what you find on the incident so the next analysis can use it.')

  const count = subject.alerts.length > 1 ? ` ${subject.alerts.length} alerts` : ''
  const recurrence = subject.occurrences > 1 ? ` It has occurred ${subject.occurrences} times.` : ''
  return {
    summary: `${subject.priority} ${subject.kind === 'incident' ? `incident ${subject.reference}` : 'incident'} "${subject.title}"${where} began at ${subject.onset.toISOString()}.${count ? `${count} are part of it.` : ''}${recurrence}`,
    suspectDeploys: suspects.slice(0, 3).map((change) => ({
      deployId: change.id,
      service: change.service,
      version: change.version,
      score: change.score,
      reasons: change.reasons,
    })),
    probableCause,
    evidence,
    recommendations,
    severity: severityOf(subject),
  }
}
