import type { Executor, Page } from '@svc/db'
import { paged } from '@svc/db'
import { checkColumns } from './queries/checks.js'
import { availabilityOf, type AvailabilityOptions } from './results/availability.js'

// What other surfaces read of this one's tables (ARCHITECTURE.md, "Between surfaces").

/** The organization's checks, for the platform's `GET /organizations/:orgId/checks`. */
export async function checksOf(db: Executor, organizationId: string, page: Page) {
  const { rows, total } = await paged(
    db.selectFrom('divinux.syntheticChecks').where('organizationId', '=', organizationId),
    (query) => query.select(checkColumns).orderBy('createdAt').orderBy('id'),
    page,
  )
  return {
    rows: rows.map((row) => ({
      id: row.id,
      name: row.name,
      kind: row.kind,
      frequencySeconds: row.frequencySeconds,
      regions: row.regions,
      paused: row.paused,
      state: row.state,
      stateChangedAt: row.stateChangedAt,
      createdAt: row.createdAt,
    })),
    total,
  }
}

/** A check's latest results, for an analysis of its alert (insights evidence). */
export async function recentCheckResults(db: Executor, organizationId: string, checkId: string, limit: number) {
  return db
    .selectFrom('divinux.syntheticRuns')
    .select(['region', 'dueAt', 'status', 'totalMs', 'statusCode', 'error'])
    .where('organizationId', '=', organizationId)
    .where('checkId', '=', checkId)
    .where('state', '=', 'done')
    .orderBy('dueAt', 'desc')
    .limit(limit)
    .execute()
}

/**
 * Every check's availability over [from, to), for the platform's uptime report: the same
 * arithmetic as a check's `sla` (maintenance windows of linked components left out).
 */
export async function checkAvailabilityBetween(db: Executor, organizationId: string, from: Date, to: Date, options: AvailabilityOptions) {
  const checks = await db
    .selectFrom('divinux.syntheticChecks')
    .select(['id', 'organizationId', 'name', 'kind', 'statusComponentIds', 'state'])
    .where('organizationId', '=', organizationId)
    .where('createdAt', '<', to)
    .orderBy('name')
    .orderBy('id')
    .execute()
  const rows = []
  for (const check of checks) {
    const { runs, failures, availability } = await availabilityOf(db, check, from, to, options)
    rows.push({ id: check.id, name: check.name, kind: check.kind, state: check.state, runs, failures, availability })
  }
  return rows
}
