import { sql } from 'kysely'
import type { Executor } from '@svc/db'

// The dependency map: edges between catalog services (`service` depends on `dependsOn`). The
// other modules read it by the names alerts and deploys carry (`dependencyNameEdges`,
// `serviceEdgeNames`), each service standing for its key and every alias.

export const DEPENDENCIES_PER_ORGANIZATION = 2_000

const edgesOf = (db: Executor, organizationId: string) =>
  db
    .selectFrom('divinux.serviceEdges as e')
    .innerJoin('divinux.services as a', 'a.id', 'e.serviceId')
    .innerJoin('divinux.services as b', 'b.id', 'e.dependsOnId')
    .where('e.organizationId', '=', organizationId)

/** Every edge, by its services' keys, as `…/service-dependencies` lists them. */
export async function listEdges(db: Executor, organizationId: string) {
  return edgesOf(db, organizationId)
    .select(['e.id', 'a.key as service', 'b.key as dependsOn', 'e.createdBy', 'e.createdAt'])
    .orderBy('a.key')
    .orderBy('b.key')
    .execute()
}

export async function countEdges(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('divinux.serviceEdges')
    .select(sql<number>`count(*)::int`.as('count'))
    .where('organizationId', '=', organizationId)
    .executeTakeFirstOrThrow()
  return row.count
}

/** Adds an edge; undefined when it exists already. */
export async function insertEdge(db: Executor, organizationId: string, serviceId: string, dependsOnId: string, createdBy: string) {
  return db
    .insertInto('divinux.serviceEdges')
    .values({ organizationId, serviceId, dependsOnId, createdBy })
    .onConflict((conflict) => conflict.columns(['serviceId', 'dependsOnId']).doNothing())
    .returning(['id', 'createdBy', 'createdAt'])
    .executeTakeFirst()
}

/** Removes an edge, returning what it joined (by key); undefined when the organization has no such edge. */
export async function deleteEdge(db: Executor, organizationId: string, edgeId: string) {
  const row = await edgesOf(db, organizationId)
    .select(['a.key as service', 'b.key as dependsOn'])
    .where('e.id', '=', edgeId)
    .executeTakeFirst()
  if (!row) return undefined
  await db.deleteFrom('divinux.serviceEdges').where('organizationId', '=', organizationId).where('id', '=', edgeId).execute()
  return row
}

/** The keys each of `serviceIds` depends on, by key: service id → keys. */
export async function dependsOnOf(db: Executor, organizationId: string, serviceIds: string[]): Promise<Map<string, string[]>> {
  const keys = new Map<string, string[]>(serviceIds.map((id) => [id, []]))
  if (serviceIds.length === 0) return keys
  const rows = await edgesOf(db, organizationId)
    .select(['e.serviceId', 'b.key'])
    .where('e.serviceId', 'in', serviceIds)
    .orderBy('b.key')
    .execute()
  for (const row of rows) keys.get(row.serviceId)?.push(row.key)
  return keys
}

/**
 * Makes `serviceId` depend on exactly `dependsOnIds`: edges to others are removed, new ones added
 * (their creator `createdBy`), edges already there kept as they were.
 */
export async function setDependsOn(db: Executor, organizationId: string, serviceId: string, dependsOnIds: string[], createdBy: string) {
  await db
    .deleteFrom('divinux.serviceEdges')
    .where('organizationId', '=', organizationId)
    .where('serviceId', '=', serviceId)
    .$if(dependsOnIds.length > 0, (query) => query.where('dependsOnId', 'not in', dependsOnIds))
    .execute()
  if (dependsOnIds.length === 0) return
  await db
    .insertInto('divinux.serviceEdges')
    .values(dependsOnIds.map((dependsOnId) => ({ organizationId, serviceId, dependsOnId, createdBy })))
    .onConflict((conflict) => conflict.columns(['serviceId', 'dependsOnId']).doNothing())
    .execute()
}

/**
 * The dependency map by name: an edge for every name (key or alias, lower-case) of a service and
 * every name of what it depends on, so an alert or deploy carrying any of them finds its
 * neighbours (correlation, the investigator).
 */
export const serviceEdgeNames = sql`(
  select e.organization_id, service_name as service, depends_on_name as depends_on
  from divinux.service_edges e
  join divinux.services a on a.id = e.service_id
  join divinux.services b on b.id = e.depends_on_id
  cross join unnest(array_prepend(a.key, a.aliases)) service_name
  cross join unnest(array_prepend(b.key, b.aliases)) depends_on_name)`

/** The organization's dependency map by name (see `serviceEdgeNames`), ordered. */
export async function dependencyNameEdges(db: Executor, organizationId: string): Promise<Array<{ service: string; dependsOn: string }>> {
  const result = await sql<{ service: string; dependsOn: string }>`
    select service, depends_on as "dependsOn" from ${serviceEdgeNames} edge
    where edge.organization_id = ${organizationId}
    order by service, depends_on`.execute(db)
  return result.rows
}
