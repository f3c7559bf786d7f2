import { sql, type NotNull } from 'kysely'
import { paged, type Executor, type Page } from '@svc/db'

const columns = [
  'id',
  'name',
  'kind',
  'webhookUrl',
  'botToken',
  'channel',
  'signingSecret',
  'incidentChannels',
  'enabled',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

function integrationsOf(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.chatIntegrations').where('organizationId', '=', organizationId)
}

export async function listChatIntegrations(db: Executor, organizationId: string, page: Page) {
  return paged(
    integrationsOf(db, organizationId),
    (rows) =>
      rows
        .select(columns)
        .orderBy(sql`lower(name)`)
        .orderBy('id'),
    page,
  )
}

export async function findChatIntegration(db: Executor, organizationId: string, id: string, forUpdate = false) {
  const query = integrationsOf(db, organizationId).select(columns).where('id', '=', id)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type ChatIntegrationRow = NonNullable<Awaited<ReturnType<typeof findChatIntegration>>>

/** Integrations by organization and id, one statement per organization (a batch of chat jobs is mostly one). */
export async function chatIntegrationsByIds(
  db: Executor,
  wanted: ReadonlyArray<{ organizationId: string; id: string }>,
): Promise<Map<string, ChatIntegrationRow>> {
  const idsByOrganization = new Map<string, Set<string>>()
  for (const { organizationId, id } of wanted)
    idsByOrganization.set(organizationId, (idsByOrganization.get(organizationId) ?? new Set()).add(id))
  const found = new Map<string, ChatIntegrationRow>()
  for (const [organizationId, ids] of idsByOrganization) {
    const rows = await integrationsOf(db, organizationId)
      .select(columns)
      .where('id', 'in', [...ids])
      .execute()
    for (const row of rows) found.set(row.id, row)
  }
  return found
}

export async function chatIntegrationsAmong(db: Executor, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await integrationsOf(db, organizationId).select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}

/** Which of the ids are Slack apps whose buttons work (a signing secret is set), enabled or not: those that keep incident channels. */
export async function slackAppsAmong(db: Executor, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await integrationsOf(db, organizationId)
    .select('id')
    .where('id', 'in', ids)
    .where('kind', '=', 'slack_bot')
    .where('signingSecret', 'is not', null)
    .execute()
  return new Set(rows.map((row) => row.id))
}

export async function chatNameTaken(db: Executor, organizationId: string, name: string, exceptId?: string) {
  let query = integrationsOf(db, organizationId)
    .select('id')
    .where(sql`lower(name)`, '=', name.toLowerCase())
  if (exceptId) query = query.where('id', '<>', exceptId)
  return (await query.executeTakeFirst()) !== undefined
}

export interface ChatIntegrationValues {
  name: string
  kind: string
  webhookUrl: string | null
  botToken: string | null
  channel: string | null
  signingSecret: string | null
  incidentChannels: boolean
  enabled: boolean
}

export async function insertChatIntegration(db: Executor, values: ChatIntegrationValues & { organizationId: string; createdBy: string }) {
  return db.insertInto('divinux.chatIntegrations').values(values).returning(columns).executeTakeFirstOrThrow()
}

export async function updateChatIntegration(db: Executor, organizationId: string, id: string, change: Partial<ChatIntegrationValues>) {
  return db
    .updateTable('divinux.chatIntegrations')
    .set({ ...change, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst()
}

export async function deleteChatIntegration(db: Executor, organizationId: string, id: string) {
  return db
    .deleteFrom('divinux.chatIntegrations')
    .where('organizationId', '=', organizationId)
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst()
}

/** What Slack interactivity reads of an integration. */
const slackColumns = [
  'id',
  'organizationId',
  'name',
  'kind',
  'botToken',
  'channel',
  'enabled',
  'signingSecret',
  'incidentChannels',
] as const

/** An integration by id, of any organization: the one a signed Slack request names in its URL. */
export async function findSlackIntegration(db: Executor, integrationId: string) {
  return (
    db
      .selectFrom('divinux.chatIntegrations')
      .select(slackColumns)
      .where('id', '=', integrationId)
      .where('kind', '=', 'slack_bot')
      // A Slack bot is written with both (destinations/chat-integrations/routes.ts).
      .where('botToken', 'is not', null)
      .where('channel', 'is not', null)
      .$narrowType<{ botToken: NotNull; channel: NotNull }>()
      .executeTakeFirst()
  )
}

export type SlackIntegration = NonNullable<Awaited<ReturnType<typeof findSlackIntegration>>>

/** The organization's enabled Slack apps whose buttons work (a signing secret is set). */
export async function interactiveIntegrations(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.chatIntegrations')
    .select(slackColumns)
    .where('organizationId', '=', organizationId)
    .where('kind', '=', 'slack_bot')
    .where('enabled', '=', true)
    .where('signingSecret', 'is not', null)
    .where('botToken', 'is not', null)
    .where('channel', 'is not', null)
    .$narrowType<{ botToken: NotNull; channel: NotNull }>()
    .orderBy('createdAt')
    .execute()
}
