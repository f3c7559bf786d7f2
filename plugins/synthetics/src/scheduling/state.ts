import type { ResultStatus } from '@svc/check-runner'
import type { Executor } from '@svc/db'
import { publish, type AlertPriority, type CheckState } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import { checkById, setCheckState, type CheckRow } from '../queries/checks.js'
import { relayRegions, relayRuns } from '../queries/relays.js'
import { latestRunsOf, recentResultsOf, type JudgedCheck } from '../queries/runs.js'
import { failureReason } from './failure-reason.js'

export type Quorum = 'any' | 'majority' | 'all'
export type RegionStatus = ResultStatus | 'unknown'

export interface AlertRule {
  /** Consecutive failing runs before a region counts as failing. */
  failures: number
  quorum: Quorum
}

/**
 * A region's status: `unknown` when nothing runs its checks (no healthy relay) or it has no
 * result yet, never passing; failing when its last `failures` runs all failed; otherwise its
 * latest result, where a failing one short of the count shows as degraded.
 */
export function regionStatus(latest: readonly ResultStatus[], rule: AlertRule, runnable: boolean): RegionStatus {
  const [newest] = latest
  if (!runnable || newest === undefined) return 'unknown'
  if (latest.length >= rule.failures && latest.slice(0, rule.failures).every((status) => status === 'failing')) return 'failing'
  return newest === 'failing' ? 'degraded' : newest
}

/**
 * The check's state from its regions: failing when the quorum of its regions fails (any one, more
 * than half, or all of them); unknown when no region has a known status; degraded when any region
 * is degraded or failing short of the quorum; passing otherwise.
 */
export function checkState(regions: readonly RegionStatus[], quorum: Quorum): CheckState {
  const failing = regions.filter((status) => status === 'failing').length
  const needed = quorum === 'any' ? 1 : quorum === 'all' ? regions.length : Math.floor(regions.length / 2) + 1
  if (regions.length > 0 && failing >= needed) return 'failing'
  if (regions.every((status) => status === 'unknown')) return 'unknown'
  if (regions.some((status) => status === 'degraded' || status === 'failing')) return 'degraded'
  return 'passing'
}

/** What a check looks at, for people: its URL, host:port or name. */
export function targetOf(check: Pick<CheckRow, 'kind' | 'request'>): string {
  const request = check.request as Record<string, unknown>
  switch (check.kind) {
    case 'http':
      return String(request.url)
    case 'multistep': {
      // Its first step's URL names what it checks; the count says there is more.
      const steps = (request.steps ?? []) as Array<{ url: string }>
      return `${steps[0]?.url ?? ''} (${steps.length} steps)`
    }
    case 'browser': {
      // The first page its script opens names what it checks.
      const opened = /page\.goto\(\s*(['"`])([^'"`]+)\1/.exec(String(request.script))?.[2]
      return opened ? `${opened} (browser)` : 'a browser script'
    }
    case 'dns':
      return `${String(request.name)} ${String(request.recordType)}`
    case 'heartbeat':
      return 'heartbeat'
    default:
      return `${String(request.host)}:${String(request.port ?? 443)}`
  }
}

/**
 * Which regions of these checks have a runner now: this service's own, or a healthy relay's.
 * Relays are read once per organization, and only for checks with a region not the service's.
 */
async function runnableRegions(db: Executor, checks: ReadonlyArray<Pick<CheckRow, 'organizationId' | 'regions'>>, serviceRegion: string) {
  const relays = new Map<string, Awaited<ReturnType<typeof relayRegions>>>()
  for (const check of checks)
    if (!relays.has(check.organizationId) && check.regions.some((region) => region !== serviceRegion))
      relays.set(check.organizationId, await relayRegions(db, check.organizationId))
  return (check: Pick<CheckRow, 'organizationId' | 'kind'>, region: string) =>
    region === serviceRegion || relayRuns(check.kind, relays.get(check.organizationId)?.get(region))
}

/**
 * Judges a check again after a result, in the caller's transaction (the check row locked, so
 * replicas recording results of one check take turns), and publishes what its change means
 * (`judgeChecks`).
 */
export async function judgeCheck(trx: Executor, jobs: JobQueue, checkId: string, serviceRegion: string): Promise<CheckState | undefined> {
  const check = await checkById(trx, checkId, true)
  if (!check) return undefined
  return (await judgeChecks(trx, jobs, [check], serviceRegion)).get(check.id)
}

/**
 * Judges checks again after results, in the caller's transaction, which holds their rows
 * locked; answers each one's state. A check whose state changes publishes what the change
 * means: `check.failed` on becoming failing, `check.recovered` on leaving it, and
 * `check.state_changed` on any change.
 */
export async function judgeChecks(
  trx: Executor,
  jobs: JobQueue,
  checks: readonly JudgedCheck[],
  serviceRegion: string,
): Promise<Map<string, CheckState>> {
  const judged = new Map<string, CheckState>()
  if (checks.length === 0) return judged
  // One read of every check's newest results, as deep as the deepest rule needs.
  const depth = Math.max(...checks.map((check) => check.alertAfterFailures))
  const latest = new Map(
    (await recentResultsOf(trx, checks, depth)).map((row) => [`${row.checkId}\u0000${row.region}`, row.statuses] as const),
  )
  const runnable = await runnableRegions(trx, checks, serviceRegion)
  for (const check of checks) {
    const rule = { failures: check.alertAfterFailures, quorum: check.alertQuorum as Quorum }
    const statuses = check.regions.map((region) => ({
      region,
      status: regionStatus(latest.get(`${check.id}\u0000${region}`) ?? [], rule, runnable(check, region)),
    }))
    const state = checkState(
      statuses.map((entry) => entry.status),
      rule.quorum,
    )
    judged.set(check.id, state)
    const previous = check.state as CheckState
    if (state === previous) continue
    await setCheckState(trx, check.id, state)
    const failingRegions = statuses.filter((entry) => entry.status === 'failing').map((entry) => entry.region)
    await publishChange(trx, jobs, check, { state, previous, failingRegions })
  }
  return judged
}

/** Publishes a check's change of state; a failing region's reason is its latest run's, what the alert (so the page) says. */
async function publishChange(
  trx: Executor,
  jobs: JobQueue,
  check: JudgedCheck,
  change: { state: CheckState; previous: CheckState; failingRegions: string[] },
): Promise<void> {
  const { state, previous, failingRegions } = change
  const failures = (await latestRunsOf(trx, check.id, failingRegions)).map((run) => ({ region: run.region, reason: failureReason(run) }))
  const payload = {
    organizationId: check.organizationId,
    checkId: check.id,
    name: check.name,
    kind: check.kind,
    target: targetOf(check),
    state,
    previous,
    failingRegions,
    failures,
    priority: check.alertPriority as AlertPriority,
    escalationPolicyId: check.escalationPolicyId,
    statusComponentIds: check.statusComponentIds,
    service: check.service,
    at: new Date().toISOString(),
  }
  if (state === 'failing') await publish(jobs, trx, 'check.failed', payload)
  else if (previous === 'failing') await publish(jobs, trx, 'check.recovered', payload)
  await publish(jobs, trx, 'check.state_changed', payload)
}
