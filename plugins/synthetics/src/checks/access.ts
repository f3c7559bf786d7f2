import type { FastifyRequest } from 'fastify'
import { isUuid, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import { findCheck, type CheckRow } from '../queries/checks.js'
import { relayRegions } from '../queries/relays.js'
import { latestByRegion } from '../queries/runs.js'
import type { RegionStatus } from '../scheduling/state.js'

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

/**
 * Each region's latest result of the checks, as the API shows them: `unknown` for a region no
 * healthy runner serves (a relay that stopped reporting), whatever its last result was.
 */
export async function regionStatesOf(db: Executor, organizationId: string, checks: readonly CheckRow[], serviceRegion: string) {
  const rows = await latestByRegion(
    db,
    checks.map((check) => check.id),
  )
  const latest = new Map(rows.map((row) => [`${row.checkId}/${row.region}`, row]))
  const relays = checks.some((check) => check.regions.some((region) => region !== serviceRegion))
    ? await relayRegions(db, organizationId)
    : new Map<string, boolean>()
  const byCheck = new Map<string, Array<{ region: string; status: RegionStatus; lastRunAt: Date | null }>>()
  for (const check of checks) {
    byCheck.set(
      check.id,
      check.regions.map((region) => {
        const found = latest.get(`${check.id}/${region}`)
        const runnable = region === serviceRegion || relays.get(region) === true
        return { region, status: runnable && found ? found.status : 'unknown', lastRunAt: found?.finishedAt ?? null }
      }),
    )
  }
  return (checkId: string) => byCheck.get(checkId) ?? []
}
