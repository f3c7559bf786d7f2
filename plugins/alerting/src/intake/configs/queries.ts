import { sql } from 'kysely'
import { type Executor, type Json, type Page, jsonb, jsonColumn, paged } from '@svc/db'
import { catalogRoutedOrganizations, type RoutingRule } from '../../oncall/index.js'

/**
 * The enabled configs as the fire statements join them (alerts/fire.ts, `EnabledConfigs`): a
 * delivery writes only while its config is in this relation with the key and secret it was
 * authenticated by, and a new alert escalates when its config names a policy or routing rules,
 * or its organization's service catalog routes alerts (by the service they name).
 */
export const enabledConfigs = sql`
  select id, organization_id, api_key_hash, signing_secret,
    (escalation_policy_id is not null or routing_rules <> '[]'::jsonb or organization_id in (${catalogRoutedOrganizations})) as escalates
  from divinux.webhook_configs where enabled`

/** A config's stored routing rules, as the validated body wrote them. */
export const storedRoutingRules = jsonColumn<RoutingRule[]>()

const listed = [
  'id',
  'name',
  'format',
  'enabled',
  'defaultPriority',
  'autoAnalysis',
  'groupWindowSeconds',
  'rateLimitPerMinute',
  'escalationPolicyId',
  'routingRules',
  'apiKeyPrefix',
  'createdBy',
  'keyRotatedAt',
  'createdAt',
  'updatedAt',
  sql<boolean>`signing_secret is not null`.as('signed'),
] as const

export type WebhookConfigRow = NonNullable<Awaited<ReturnType<typeof findWebhookConfig>>>

export async function listWebhookConfigs(db: Executor, organizationId: string, page: Page) {
  const base = db.selectFrom('divinux.webhookConfigs').where('organizationId', '=', organizationId)
  return paged(base, (rows) => rows.select(listed).orderBy('createdAt').orderBy('id'), page)
}

export async function findWebhookConfig(db: Executor, organizationId: string, configId: string) {
  return db
    .selectFrom('divinux.webhookConfigs')
    .select(listed)
    .where('organizationId', '=', organizationId)
    .where('id', '=', configId)
    .executeTakeFirst()
}

export interface WebhookConfigSettings {
  name: string
  format: string
  enabled: boolean
  defaultPriority: string
  autoAnalysis: boolean
  groupWindowSeconds: number
  rateLimitPerMinute: number | null
  escalationPolicyId: string | null
  routingRules: unknown[]
}

export async function insertWebhookConfig(
  db: Executor,
  values: WebhookConfigSettings & {
    organizationId: string
    apiKeyPrefix: string
    apiKeyHash: string
    signingSecret: string | null
    createdBy: string
  },
) {
  return db
    .insertInto('divinux.webhookConfigs')
    .values({ ...values, routingRules: jsonb(values.routingRules) })
    .returning(listed)
    .executeTakeFirstOrThrow()
}

export async function updateWebhookConfig(
  db: Executor,
  organizationId: string,
  configId: string,
  changes: Partial<WebhookConfigSettings> & { signingSecret?: string | null },
) {
  const { routingRules, ...rest } = changes
  return db
    .updateTable('divinux.webhookConfigs')
    .set({ ...rest, ...(routingRules ? { routingRules: jsonb(routingRules) } : {}), updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', configId)
    .returning(listed)
    .executeTakeFirst()
}

/** A new API key (and, when given, a new signing secret); the old key stops working with this commit. */
export async function rotateWebhookKey(
  db: Executor,
  organizationId: string,
  configId: string,
  key: { apiKeyPrefix: string; apiKeyHash: string; signingSecret?: string },
) {
  return db
    .updateTable('divinux.webhookConfigs')
    .set({ ...key, keyRotatedAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', configId)
    .returning(listed)
    .executeTakeFirst()
}

export async function deleteWebhookConfig(db: Executor, organizationId: string, configId: string) {
  return db
    .deleteFrom('divinux.webhookConfigs')
    .where('organizationId', '=', organizationId)
    .where('id', '=', configId)
    .returning('id')
    .executeTakeFirst()
}

/** The config that names the policy, as its fallback or in a routing rule, as a policy reference names it. */
export async function configUsingPolicy(db: Executor, organizationId: string, policyId: string): Promise<string | undefined> {
  const needle = JSON.stringify([{ escalationPolicyId: policyId }])
  const row = await db
    .selectFrom('divinux.webhookConfigs')
    .select('name')
    .where('organizationId', '=', organizationId)
    .where((eb) => eb.or([eb('escalationPolicyId', '=', policyId), eb(sql<boolean>`routing_rules @> ${needle}::jsonb`, '=', true)]))
    .executeTakeFirst()
  return row && `the webhook config ${row.name}`
}

/** What routing a new alert needs of its config (a policy, routing rules), for the configs named: by id. */
export async function routingOfConfigs(db: Executor, configIds: readonly string[]) {
  if (configIds.length === 0) return new Map<string, { escalationPolicyId: string | null; routingRules: Json }>()
  const rows = await db
    .selectFrom('divinux.webhookConfigs')
    .select(['id', 'escalationPolicyId', 'routingRules'])
    .where('id', 'in', [...new Set(configIds)])
    .execute()
  return new Map(rows.map(({ id, ...routing }) => [id, routing]))
}
