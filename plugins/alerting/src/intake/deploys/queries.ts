import { type Selectable, sql } from 'kysely'
import { type DivinuxDeployEvents, type Executor, type Page, paged } from '@svc/db'
import type { DeployInput } from './read.js'

const deployColumns = [
  'id',
  'configId',
  'source',
  'kind',
  'service',
  'environment',
  'version',
  'commitSha',
  'repository',
  'url',
  'status',
  'startedAt',
  'finishedAt',
  'deployedAt',
  'createdAt',
] as const

/**
 * The deploys as the modules above read them inside their own statements (correlation's deploy
 * rule): a derived table of the columns published here, pulled up by the planner into the
 * statement that joins it (alerts/queries.ts, `alertsRelation`, says why).
 */
export const deploysRelation = sql<
  Pick<Selectable<DivinuxDeployEvents>, 'id' | 'organizationId' | 'service' | 'environment' | 'version' | 'deployedAt'>
>`(select id, organization_id, service, environment, version, deployed_at from divinux.deploy_events)`

export type DeployEventRow = Awaited<ReturnType<typeof insertDeployEvent>>['row']

/**
 * Records a deploy; with a delivery id seen before in the organization, records nothing and
 * answers the first delivery's event with `repeated: true`.
 */
export async function insertDeployEvent(
  db: Executor,
  organizationId: string,
  configId: string,
  deploy: DeployInput,
  deliveryId: string | null,
) {
  const inserted = await db
    .insertInto('divinux.deployEvents')
    .values({ organizationId, configId, ...deploy, deliveryId, deployedAt: deploy.finishedAt ?? deploy.startedAt ?? sql<Date>`now()` })
    .onConflict((oc) => oc.columns(['organizationId', 'deliveryId']).where('deliveryId', 'is not', null).doNothing())
    .returning(deployColumns)
    .executeTakeFirst()
  if (inserted) return { row: inserted, repeated: false }
  const first = await db
    .selectFrom('divinux.deployEvents')
    .select(deployColumns)
    .where('organizationId', '=', organizationId)
    .where('deliveryId', '=', deliveryId)
    .executeTakeFirstOrThrow()
  return { row: first, repeated: true }
}

export interface DeployFilter {
  service?: string
  environment?: string
  status?: string
  from?: string
  to?: string
}

export async function listDeployEvents(db: Executor, organizationId: string, filter: DeployFilter, page: Page) {
  let query = db.selectFrom('divinux.deployEvents').where('organizationId', '=', organizationId)
  if (filter.service) query = query.where('service', '=', filter.service)
  if (filter.environment) query = query.where('environment', '=', filter.environment)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.from) query = query.where('deployedAt', '>=', new Date(filter.from))
  if (filter.to) query = query.where('deployedAt', '<', new Date(filter.to))
  return paged(query, (rows) => rows.select(deployColumns).orderBy('deployedAt', 'desc').orderBy('id', 'desc'), page)
}

export async function findDeployEvent(db: Executor, organizationId: string, deployEventId: string) {
  return db
    .selectFrom('divinux.deployEvents')
    .select(deployColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', deployEventId)
    .executeTakeFirst()
}

export interface DeployWindow {
  /** Only deploys of these services; every service when absent. */
  services?: readonly string[]
  /** The window is `(from, to]`. */
  from: Date
  to: Date
  /** At most this many, the newest; all in the window when absent. */
  limit?: number
}

/**
 * The one read of deploys, for everything that asks which deploys came before or around a
 * moment (command rooms, related incidents, workflows' conditions, reports and the
 * investigator): the organization's deploys in the window, newest first.
 */
export async function deploysIn(db: Executor, organizationId: string, window: DeployWindow) {
  if (window.services?.length === 0) return []
  let query = db
    .selectFrom('divinux.deployEvents')
    .select(deployColumns)
    .where('organizationId', '=', organizationId)
    .where('deployedAt', '>', window.from)
    .where('deployedAt', '<=', window.to)
  if (window.services) query = query.where('service', 'in', [...window.services])
  query = query.orderBy('deployedAt', 'desc').orderBy('id', 'desc')
  if (window.limit !== undefined) query = query.limit(window.limit)
  return query.execute()
}

/** The window of `minutes` up to `to`. */
export function minutesBefore(to: Date, minutes: number): Pick<DeployWindow, 'from' | 'to'> {
  return { from: new Date(to.getTime() - minutes * 60_000), to }
}

/** The enabled config of an ingest key, if it belongs to this organization. */
export async function findDeployIngestConfig(db: Executor, organizationId: string, apiKeyHash: string) {
  return db
    .selectFrom('divinux.webhookConfigs')
    .select(['id', 'signingSecret'])
    .where('organizationId', '=', organizationId)
    .where('apiKeyHash', '=', apiKeyHash)
    .where('enabled', '=', true)
    .executeTakeFirst()
}
