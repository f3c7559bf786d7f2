import type { FastifyRequest } from 'fastify'
import { isUuid, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import { findCheck, type CheckRow } from '../queries/checks.js'
import { relayRegions, relayRuns } from '../queries/relays.js'
import { recentResultsOf } from '../queries/runs.js'
import { checkState, regionStatus, type Quorum, type RegionStatus } from '../scheduling/state.js'

/** The check of `:checkId` in the caller's organization; another organization's check is not found. */
export async function checkOfRequest(executor: Executor, request: FastifyRequest, forUpdate = false): Promise<CheckRow> {
  const { organizationId } = membershipOf(request)
  const { checkId } = request.params as { checkId: string }
  const check = isUuid(checkId) ? await findCheck(executor, organizationId, checkId, forUpdate) : undefined
  if (!check) throw new NotFoundError('check')
  return check
}

/** The audit entry's subject for a synthetics record. */
export const auditEntry = (organizationId: string, entityType: string, entityId: string) => ({
  organizationId,
  product: 'synthetics' as const,
  entityType,
  entityId,
})

/** A check as the API shows it: each region's status, and the state they make. */
export interface CheckJudgement {
  state: ReturnType<typeof checkState>
  regions: Array<{ region: string; status: RegionStatus; lastRunAt: Date | null }>
}

/**
 * The checks judged as they stand at this read, by the rule the maintenance job and each result
 * apply (state.ts): a region no healthy runner serves (a relay that stopped reporting) is
 * `unknown`, whatever its last result, and the check's state is made of these regions, so one
 * answer never shows a passing check over an unknown region (decision 0016). The stored state,
 * and the events its changes publish, follow at the next result or maintenance run.
 */
export async function judgementsOf(db: Executor, organizationId: string, checks: readonly CheckRow[], serviceRegion: string) {
  const depth = Math.max(1, ...checks.map((check) => check.alertAfterFailures))
  const rows = await recentResultsOf(db, checks, depth)
  const recent = new Map(rows.map((row) => [`${row.checkId}/${row.region}`, row]))
  const relays = checks.some((check) => check.regions.some((region) => region !== serviceRegion))
    ? await relayRegions(db, organizationId)
    : new Map<string, { healthy: boolean; browser: boolean; healthyBrowser: boolean }>()
  const byCheck = new Map<string, CheckJudgement>()
  for (const check of checks) {
    const rule = { failures: check.alertAfterFailures, quorum: check.alertQuorum as Quorum }
    const regions = check.regions.map((region) => {
      const found = recent.get(`${check.id}/${region}`)
      const runnable = region === serviceRegion || relayRuns(check.kind, relays.get(region))
      const status = regionStatus((found?.statuses ?? []).slice(0, rule.failures), rule, runnable)
      return { region, status, lastRunAt: found?.lastRunAt ?? null }
    })
    byCheck.set(check.id, {
      state: checkState(
        regions.map((entry) => entry.status),
        rule.quorum,
      ),
      regions,
    })
  }
  return (checkId: string): CheckJudgement => byCheck.get(checkId) ?? { state: 'unknown', regions: [] }
}
