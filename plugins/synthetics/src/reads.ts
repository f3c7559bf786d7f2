import { sql } from 'kysely'
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
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
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

/**
 * The results of these checks in [from, to], per check and region: runs, failures, the median
 * time and the commonest errors. Whether a check failed everywhere or in one region is what
 * tells an outage from a network path (the investigator's tool).
 */
export async function checkResultsAround(db: Executor, organizationId: string, checkIds: string[], from: Date, to: Date) {
  if (checkIds.length === 0) return []
  const result = await sql<{
    checkId: string
    name: string
    region: string
    runs: number
    failures: number
    medianMs: number | null
    errors: string[]
  }>`
    select r.check_id as "checkId", c.name, r.region, count(*)::int as runs,
      count(*) filter (where r.status = 'failing')::int as failures,
      percentile_cont(0.5) within group (order by r.total_ms)::float8 as "medianMs",
      coalesce((array_agg(distinct r.error) filter (where r.error is not null))[1:3], '{}') as errors
    from divinux.synthetic_runs r join divinux.synthetic_checks c on c.id = r.check_id
    where r.organization_id = ${organizationId} and r.check_id in (${sql.join(checkIds)}) and r.state = 'done'
      and r.due_at >= ${from} and r.due_at <= ${to}
    group by r.check_id, c.name, r.region
    order by c.name, r.region`.execute(db)
  return result.rows
}

/** The checks that belong to any of these services (by the name each check gives, any letter case): what a catalog service shows. */
export async function checksOfServices(db: Executor, organizationId: string, services: string[]) {
  if (services.length === 0) return []
  const lowered = [...new Set(services.map((service) => service.toLowerCase()))]
  return db
    .selectFrom('divinux.syntheticChecks')
    .select(['id', 'name'])
    .where('organizationId', '=', organizationId)
    .where(sql<boolean>`lower(service) = any(${lowered}::text[])`)
    .orderBy('name')
    .limit(100)
    .execute()
}

/** The organization's checks that status page components follow, for a maintenance of those components to quiet. */
export async function checksFollowedBy(db: Executor, organizationId: string, componentIds: string[]): Promise<string[]> {
  if (componentIds.length === 0) return []
  const rows = await db
    .selectFrom('divinux.syntheticChecks')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where(sql<boolean>`status_component_ids && ${sql.val(componentIds)}::uuid[]`)
    .execute()
  return rows.map((row) => row.id)
}
