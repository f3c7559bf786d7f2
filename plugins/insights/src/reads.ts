import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import type { IncidentReference } from '@svc/events'

// What other surfaces may know of the insights surface's tables: the alerting surface shows an
// alert's latest analysis in its command room. Reads only, scoped to one organization.

/**
 * The latest analysis of an incident, whatever its status, with the on-call agent's two lines
 * once it has them; undefined before one is requested. `sameIncident` names the other subjects of
 * the same incident (an incident's alerts, an alert's incident): an analysis asked for any of them
 * explains it, and the latest of all is the one shown (decision 0019, "One incident everywhere").
 */
export async function latestAnalysisOf(db: Executor, organizationId: string, incident: IncidentReference & { sameIncident?: string[] }) {
  const ids = [...new Set([incident.incidentId, ...(incident.sameIncident ?? [])])]
  const latest = await latestAnalysesOf(db, organizationId, incident.sourceProduct, ids)
  return [...latest.values()].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0]
}

/** `latestAnalysisOf` for several incidents of one product, in one statement, by incident id. */
export async function latestAnalysesOf(
  db: Executor,
  organizationId: string,
  sourceProduct: IncidentReference['sourceProduct'],
  incidentIds: string[],
) {
  if (incidentIds.length === 0) return new Map<string, never>()
  const rows = await db
    .selectFrom('divinux.analyses as a')
    .leftJoin('divinux.agentOutputs as o', (join) => join.onRef('o.analysisId', '=', 'a.id').on('o.agent', '=', 'oncall'))
    .distinctOn('a.incidentId')
    .select([
      'a.incidentId',
      'a.id',
      'a.status',
      'a.summary',
      'a.rootCause',
      'a.recommendations',
      'a.severity',
      'a.suspectedDeployId',
      'a.createdAt',
      'a.completedAt',
      'o.output as oncall',
    ])
    .where('a.organizationId', '=', organizationId)
    .where('a.sourceProduct', '=', sourceProduct)
    .where('a.incidentId', 'in', incidentIds)
    .orderBy('a.incidentId')
    .orderBy('a.createdAt', 'desc')
    .execute()
  return new Map(
    rows.map(({ incidentId, oncall, ...analysis }) => [
      incidentId,
      { ...analysis, oncall: (oncall as { lines?: string[] } | null)?.lines ?? null },
    ]),
  )
}

/**
 * The organization's AI consumption in [from, to), for the platform's AI usage report: totals,
 * by feature and model, and by UTC day, from the spend ledger (`ai_usage`).
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function aiUsageBetween(db: Executor, organizationId: string, from: Date, to: Date) {
  const recorded = sql`organization_id = ${organizationId} and created_at >= ${from} and created_at < ${to}`
  const sums = sql`count(*)::int as requests, coalesce(sum(prompt_tokens), 0)::int8::float8 as prompt_tokens,
    coalesce(sum(completion_tokens), 0)::int8::float8 as completion_tokens, coalesce(sum(cost_usd), 0)::float8 as cost_usd`
  type Sums = { requests: number; promptTokens: number; completionTokens: number; costUsd: number }
  const [totals, byModel, perDay] = await Promise.all([
    sql<Sums>`select ${sums} from divinux.ai_usage where ${recorded}`.execute(db),
    sql<Sums & { feature: string; provider: string; model: string }>`
      select feature, provider, model, ${sums} from divinux.ai_usage where ${recorded}
      group by feature, provider, model order by cost_usd desc, feature, provider, model`.execute(db),
    sql<Sums & { day: string }>`
      select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, ${sums}
      from divinux.ai_usage where ${recorded} group by 1 order by 1`.execute(db),
  ])
  return { totals: totals.rows[0]!, byModel: byModel.rows, perDay: perDay.rows }
}

/** RCA documents linked to any of these incidents of alerting (an incident's id, or its alerts'), newest first, at most 20. */
export async function rcasAbout(db: Executor, organizationId: string, alertingIds: string[]) {
  if (alertingIds.length === 0) return []
  return db
    .selectFrom('divinux.rcas as r')
    .innerJoin('divinux.rcaIncidentLinks as l', 'l.rcaId', 'r.id')
    .select(['r.id', 'r.title', 'r.status', 'r.rootCause', 'r.publishedAt', 'r.createdAt'])
    .distinct()
    .where('r.organizationId', '=', organizationId)
    .where('l.organizationId', '=', organizationId)
    .where('l.sourceProduct', '=', 'alerting')
    .where('l.incidentId', 'in', alertingIds)
    .orderBy('r.createdAt', 'desc')
    .limit(20)
    .execute()
}

/** Whether the organization has this analysis: what another surface may cite (an incident's status update drafted by it). */
export async function hasAnalysis(db: Executor, organizationId: string, analysisId: string): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.analyses')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('id', '=', analysisId)
    .executeTakeFirst()
  return row !== undefined
}
