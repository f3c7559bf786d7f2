// How the investigator weighs a deploy (decision 0021, "Scoring deploys"). A deploy's score is
// the product of independent factors, each 0 to 1, so any one of them can rule a deploy out:
// how long before the onset it landed (halving every 45 minutes), how the service relates to
// what is failing, the environment, whether a newer deploy of the same service replaced it
// before the onset, its own outcome, and its kind. A deploy after the onset scores 0: it cannot
// have caused what was already failing.

export interface DeployRecord {
  id: string
  kind: string
  service: string
  environment: string | null
  version: string | null
  commitSha: string | null
  status: string
  deployedAt: Date
}

export type Relation = 'affected' | 'dependency' | 'unrelated'

export interface ScoredDeploy {
  id: string
  kind: string
  service: string
  environment: string | null
  version: string | null
  commitSha: string | null
  status: string
  at: string
  minutesBeforeOnset: number
  relation: Relation
  score: number
  reasons: string[]
}

/** A deploy scoring this or more is named as a suspect; below it, the investigation says no deploy points at the incident. */
export const SUSPECT_THRESHOLD = 0.3
const HALF_LIFE_MINUTES = 45
const RELATION_WEIGHT: Record<Relation, number> = { affected: 1, dependency: 0.7, unrelated: 0.15 }
const NON_PRODUCTION = /^(stag|staging|stage|dev|develop|development|test|testing|qa|uat|preview|sandbox|canary-test|ci)\b/i
const SUPERSEDED_WEIGHT = 0.35
const STATUS_WEIGHT: Record<string, number> = { failure: 0.6, error: 0.6, in_progress: 0.5, pending: 0.5, queued: 0.3, inactive: 0.3 }
const KIND_WEIGHT: Record<string, number> = { deploy: 1, config: 1, rollback: 0.3 }
/** A failing service whose own dependency failed before it is more likely a victim than a cause. */
const VICTIM_WEIGHT = 0.3

const round = (value: number) => Math.round(value * 1000) / 1000

const PRODUCTION = /^(prod|production|live)$/i
/** Whether two environment names are one: in any letter case, `prod`, `production` and `live` alike. */
function sameEnvironment(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase() || (PRODUCTION.test(a) && PRODUCTION.test(b))
}

function plural(value: number, unit: string) {
  return `${value} ${unit}${value === 1 ? '' : 's'}`
}

/**
 * Scores each deploy against the onset. `affected` are the services failing, `dependencies` the
 * services they depend on (directly or through others). Answers the deploys before the onset,
 * best first; those after it come last with score 0 and the reason.
 */
export function scoreDeploys(
  deploys: DeployRecord[],
  context: {
    onset: Date
    /** The environments the failing alerts name (lower case); empty: not known, production assumed. */
    environments?: string[]
    affected: string[]
    dependencies: string[]
    /** Failing services whose failing dependency (the value) began failing no later than they did. */
    failedAfterDependency?: Map<string, string>
  },
): ScoredDeploy[] {
  const affected = new Set(context.affected)
  const dependencies = new Set(context.dependencies)
  const scored = deploys.map((deploy): ScoredDeploy => {
    const minutesBeforeOnset = Math.round((context.onset.getTime() - deploy.deployedAt.getTime()) / 60_000)
    const relation: Relation = affected.has(deploy.service) ? 'affected' : dependencies.has(deploy.service) ? 'dependency' : 'unrelated'
    const base = {
      id: deploy.id,
      kind: deploy.kind,
      service: deploy.service,
      environment: deploy.environment,
      version: deploy.version,
      commitSha: deploy.commitSha,
      status: deploy.status,
      at: deploy.deployedAt.toISOString(),
      minutesBeforeOnset,
      relation,
    }
    if (deploy.deployedAt.getTime() > context.onset.getTime())
      return { ...base, score: 0, reasons: [`landed ${plural(-minutesBeforeOnset, 'minute')} after the onset: it cannot have caused it`] }

    const reasons: string[] = []
    const time = 0.5 ** (Math.max(0, minutesBeforeOnset) / HALF_LIFE_MINUTES)
    reasons.push(`${plural(minutesBeforeOnset, 'minute')} before the onset`)
    reasons.push(
      relation === 'affected'
        ? `${deploy.service} is failing`
        : relation === 'dependency'
          ? `a failing service depends on ${deploy.service}`
          : `${deploy.service} is neither failing nor a dependency of what is`,
    )
    let environment = 1
    const failingIn = context.environments ?? []
    if (failingIn.length > 0 && deploy.environment) {
      // The alerts say where it fails: a deploy elsewhere cannot have caused it, whichever it is.
      if (!failingIn.some((name) => sameEnvironment(name, deploy.environment!))) {
        environment = 0.05
        reasons.push(`to ${deploy.environment}, while the alerts are in ${failingIn.join(', ')}`)
      }
    } else if (deploy.environment && NON_PRODUCTION.test(deploy.environment)) {
      environment = 0.05
      reasons.push(`to ${deploy.environment}, not production`)
    } else if (!deploy.environment) environment = 0.8
    // A newer release of the same service (and environment) before the onset is what was running.
    const newer = deploys.find(
      (other) =>
        other.id !== deploy.id &&
        other.service === deploy.service &&
        other.kind !== 'config' &&
        deploy.kind !== 'config' &&
        (other.environment ?? '') === (deploy.environment ?? '') &&
        other.deployedAt > deploy.deployedAt &&
        other.deployedAt <= context.onset,
    )
    const superseded = newer ? SUPERSEDED_WEIGHT : 1
    if (newer) reasons.push(`replaced by ${newer.version ?? 'a newer deploy'} before the onset`)
    const status = STATUS_WEIGHT[deploy.status] ?? 1
    if (status < 1) reasons.push(`its status is ${deploy.status}`)
    const kind = KIND_WEIGHT[deploy.kind] ?? 1
    if (deploy.kind === 'rollback') reasons.push('a rollback returns to a version that ran before')
    if (deploy.kind === 'config') reasons.push('a configuration change')
    const upstream = context.failedAfterDependency?.get(deploy.service)
    const victim = upstream ? VICTIM_WEIGHT : 1
    if (upstream) reasons.push(`${upstream}, which it depends on, was failing before it`)
    const score = round(time * RELATION_WEIGHT[relation] * environment * superseded * status * kind * victim)
    return { ...base, score, reasons }
  })
  return scored.sort((a, b) => b.score - a.score || a.minutesBeforeOnset - b.minutesBeforeOnset)
}

/**
 * The failing services that began failing no earlier than a failing service they depend on
 * (directly or through others): each with that dependency. The earliest failure along a
 * dependency chain is where a cause is looked for first.
 */
export function victimsOfDependencies(
  firstFailures: Map<string, Date>,
  edges: Array<{ service: string; dependsOn: string }>,
): Map<string, string> {
  const victims = new Map<string, string>()
  for (const [service, failedAt] of firstFailures) {
    for (const dependency of dependenciesOf([service], edges)) {
      const dependencyFailedAt = firstFailures.get(dependency)
      if (dependencyFailedAt && dependencyFailedAt <= failedAt) {
        victims.set(service, dependency)
        break
      }
    }
  }
  return victims
}

/** What depends on the failing services, transitively (at most `depth` hops): the services whose deploys count as a dependency's. */
export function dependenciesOf(services: string[], edges: Array<{ service: string; dependsOn: string }>, depth = 3): string[] {
  const found = new Set<string>()
  let frontier = new Set(services)
  for (let hop = 0; hop < depth && frontier.size > 0; hop++) {
    const next = new Set<string>()
    for (const edge of edges) if (frontier.has(edge.service) && !found.has(edge.dependsOn)) next.add(edge.dependsOn)
    for (const service of next) found.add(service)
    frontier = next
  }
  for (const service of services) found.delete(service)
  return [...found]
}
