import { sql } from 'kysely'
import { type Executor, type Page, paged } from '@svc/db'
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

/** The deploys of a service in the window before a moment: what the command room shows. */
export async function deploysBefore(db: Executor, organizationId: string, service: string, before: Date, windowMinutes: number) {
  return db
    .selectFrom('divinux.deployEvents')
    .select(deployColumns)
    .where('organizationId', '=', organizationId)
    .where('service', '=', service)
    .where('deployedAt', '<=', before)
    .where('deployedAt', '>', sql<Date>`${before}::timestamptz - make_interval(mins => ${windowMinutes})`)
    .orderBy('deployedAt', 'desc')
    .execute()
}

/** Deploys of any of these services in the window before `before`, newest first, at most `limit`. */
export async function deploysOfServicesBefore(
  db: Executor,
  organizationId: string,
  services: string[],
  before: Date,
  windowMinutes: number,
  limit: number,
) {
  if (services.length === 0) return []
  return db
    .selectFrom('divinux.deployEvents')
    .select(deployColumns)
    .where('organizationId', '=', organizationId)
    .where('service', 'in', services)
    .where('deployedAt', '<=', before)
    .where('deployedAt', '>', sql<Date>`${before}::timestamptz - make_interval(mins => ${windowMinutes})`)
    .orderBy('deployedAt', 'desc')
    .limit(limit)
    .execute()
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
