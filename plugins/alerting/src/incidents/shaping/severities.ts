import { sql } from 'kysely'
import type { AlertPriority } from '@svc/events'
import { type Executor } from '@svc/db'
import { invalidField } from '@svc/http'

// The severities of an organization's incidents (decision 0031, "Severities"): named, described
// and ordered by the organization, the most severe first; an organization that set none has the
// defaults. Each says the alert priority it pages at (P1 to P4), which is how the rest of the
// product reads a severity it did not name: responder requests page at it, an alert opens an
// incident of the most severe severity not more urgent than itself, status pages take their
// impact from it.

export const PAGING_PRIORITIES = ['P1', 'P2', 'P3', 'P4'] as const
export type PagingPriority = (typeof PAGING_PRIORITIES)[number]

export interface SeverityDefinition {
  key: string
  name: string
  description: string | null
  priority: PagingPriority
}

/** Every organization's severities until it sets its own: incident.io's and PagerDuty's usual four. */
export const DEFAULT_SEVERITIES: readonly SeverityDefinition[] = [
  { key: 'SEV1', name: 'Critical', description: 'Customers cannot use the product, or data is at risk.', priority: 'P1' },
  { key: 'SEV2', name: 'Major', description: 'A core feature is broken or badly degraded for many customers.', priority: 'P2' },
  { key: 'SEV3', name: 'Minor', description: 'A feature is degraded, or broken for a few customers.', priority: 'P3' },
  { key: 'SEV4', name: 'Low', description: 'Little or no impact on customers.', priority: 'P4' },
]

/** The organization's severities, the most severe first (the defaults when it set none). */
export async function severitiesOf(db: Executor, organizationId: string): Promise<SeverityDefinition[]> {
  const rows = await db
    .selectFrom('divinux.incidentSeverities')
    .select(['key', 'name', 'description', 'priority'])
    .where('organizationId', '=', organizationId)
    .orderBy('rank')
    .execute()
  // The table's check constraint holds priority to the list.
  return rows.length > 0 ? (rows as SeverityDefinition[]) : [...DEFAULT_SEVERITIES]
}

/** Whether the organization set its own severities. */
export async function hasOwnSeverities(db: Executor, organizationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.incidentSeverities')
    .select('key')
    .where('organizationId', '=', organizationId)
    .executeTakeFirst()
  return row !== undefined
}

/** Replaces the organization's severities with the list, in its order. */
export async function replaceSeverities(db: Executor, organizationId: string, severities: SeverityDefinition[], updatedBy: string) {
  await db.deleteFrom('divinux.incidentSeverities').where('organizationId', '=', organizationId).execute()
  await db
    .insertInto('divinux.incidentSeverities')
    .values(severities.map((severity, index) => ({ organizationId, ...severity, rank: index + 1, updatedBy })))
    .execute()
}

/** How many of the organization's incidents have each of these severities. */
export async function incidentsWithSeverities(db: Executor, organizationId: string, keys: string[]) {
  if (keys.length === 0) return new Map<string, number>()
  const rows = await db
    .selectFrom('divinux.incidents')
    .select(['severity', sql<number>`count(*)::int`.as('count')])
    .where('organizationId', '=', organizationId)
    .where('severity', 'in', keys)
    .groupBy('severity')
    .execute()
  return new Map(rows.map((row) => [row.severity, row.count]))
}

const keysOf = (severities: SeverityDefinition[]) => severities.map((severity) => severity.key).join(', ')

/**
 * The organization's severity of this key, matched in any letter case (Slack's `sev2`), or a 400
 * naming `field` and the keys it may be.
 */
export async function requireSeverity(
  db: Executor,
  organizationId: string,
  key: string,
  field: string,
  context: 'body' | 'querystring' = 'body',
): Promise<SeverityDefinition> {
  const severities = await severitiesOf(db, organizationId)
  const found = severities.find((severity) => severity.key.toLowerCase() === key.toLowerCase())
  if (!found) throw invalidField(field, `is not a severity of this organization: one of ${keysOf(severities)}`, context)
  return found
}

const rankOfPriority = (priority: string) => Number(priority.slice(1))

/**
 * The severity an alert of this priority opens an incident at: the most severe one that does not
 * page more urgently than the alert (P1 → SEV1 … P4 and P5 → SEV4 with the defaults), else the
 * mildest.
 */
export function severityForPriority(severities: SeverityDefinition[], priority: AlertPriority | string): SeverityDefinition {
  const rank = rankOfPriority(priority)
  return severities.find((severity) => rankOfPriority(severity.priority) >= rank) ?? severities.at(-1)!
}

/** The priority an incident of this severity pages at (a key the organization no longer has: P3). */
export async function priorityOfIncidentSeverity(db: Executor, organizationId: string, key: string): Promise<PagingPriority> {
  const severities = await severitiesOf(db, organizationId)
  return severities.find((severity) => severity.key === key)?.priority ?? 'P3'
}

/** The severity a person's quick declaration takes when none is named (Slack): the first paging at P3, else the mildest. */
export const usualSeverity = (severities: SeverityDefinition[]) =>
  severities.find((severity) => severity.priority === 'P3') ?? severities.at(-1)!
