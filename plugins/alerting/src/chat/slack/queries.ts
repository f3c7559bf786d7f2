import { sql, type NotNull } from 'kysely'
import type { Executor } from '@svc/db'

// The tables of Slack interactivity (migration 0045): messages we can rewrite, who a Slack user
// is, and the channel each incident got. Each query is scoped by organization or by integration
// (an integration belongs to one organization).

const integrationColumns = [
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

/** How long a delivery is remembered: past the five minutes Slack's signature holds. */
const DELIVERY_KEPT_MINUTES = 10

/**
 * Claims a signed delivery for acting on: true the first time this integration sees the body,
 * false for a replay (decision 0020, "Replays"). Forgets the integration's deliveries past the
 * signature's window in the same statement.
 */
export async function claimSlackDelivery(db: Executor, integrationId: string, bodySha256: string): Promise<boolean> {
  const result = await sql<{ claimed: boolean }>`
    with forgotten as (
      delete from divinux.slack_deliveries
       where integration_id = ${integrationId} and received_at < now() - make_interval(mins => ${DELIVERY_KEPT_MINUTES})
    )
    insert into divinux.slack_deliveries (integration_id, body_sha256) values (${integrationId}, ${bodySha256})
    on conflict do nothing
    returning true as claimed`.execute(db)
  return result.rows.length === 1
}

/** An integration by id, of any organization: the one a signed Slack request names in its URL. */
export async function findSlackIntegration(db: Executor, integrationId: string) {
  return (
    db
      .selectFrom('divinux.chatIntegrations')
      .select(integrationColumns)
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
    .select(integrationColumns)
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

export async function recordSlackMessage(
  db: Executor,
  message: { organizationId: string; integrationId: string; channel: string; ts: string; alertId?: string; incidentId?: string },
): Promise<void> {
  await db
    .insertInto('divinux.slackMessages')
    .values(message)
    .onConflict((conflict) => conflict.columns(['integrationId', 'channel', 'ts']).doNothing())
    .execute()
}

export async function findSlackMessage(db: Executor, integrationId: string, channel: string, ts: string) {
  return db
    .selectFrom('divinux.slackMessages')
    .select(['alertId', 'incidentId'])
    .where('integrationId', '=', integrationId)
    .where('channel', '=', channel)
    .where('ts', '=', ts)
    .executeTakeFirst()
}

/** The messages that show the incident, or one of its alerts, in a workspace (at most 100, newest first). */
export async function messagesAboutIncident(db: Executor, organizationId: string, integrationId: string, incidentId: string) {
  return db
    .selectFrom('divinux.slackMessages as m')
    .select(['m.channel', 'm.ts', 'm.alertId', 'm.incidentId'])
    .where('m.organizationId', '=', organizationId)
    .where('m.integrationId', '=', integrationId)
    .where((eb) =>
      eb.or([
        eb('m.incidentId', '=', incidentId),
        eb(
          'm.alertId',
          'in',
          eb
            .selectFrom('divinux.incidentAlerts as l')
            .select('l.alertId')
            .where('l.organizationId', '=', organizationId)
            .where('l.incidentId', '=', incidentId),
        ),
      ]),
    )
    .orderBy('m.createdAt', 'desc')
    .limit(100)
    .execute()
}

/** The e-mail address Slack gave for a user, if fetched within `maxAgeSeconds`. */
export async function cachedSlackEmail(db: Executor, integrationId: string, slackUserId: string, maxAgeSeconds: number) {
  return db
    .selectFrom('divinux.slackUsers')
    .select('email')
    .where('integrationId', '=', integrationId)
    .where('slackUserId', '=', slackUserId)
    .where('fetchedAt', '>', sql<Date>`now() - make_interval(secs => ${maxAgeSeconds})`)
    .executeTakeFirst()
}

export async function cacheSlackEmail(db: Executor, integrationId: string, slackUserId: string, email: string | null): Promise<void> {
  await db
    .insertInto('divinux.slackUsers')
    .values({ integrationId, slackUserId, email })
    .onConflict((conflict) => conflict.columns(['integrationId', 'slackUserId']).doUpdateSet({ email, fetchedAt: sql<Date>`now()` }))
    .execute()
}

/** The Slack user known by this address in the workspace, from the cache. */
export async function cachedSlackUserOf(db: Executor, integrationId: string, email: string) {
  const row = await db
    .selectFrom('divinux.slackUsers')
    .select('slackUserId')
    .where('integrationId', '=', integrationId)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst()
  return row?.slackUserId
}

/** The active member of the organization with this e-mail address (case-insensitive). */
export async function memberByEmail(db: Executor, organizationId: string, email: string) {
  const row = await db
    .selectFrom('core.users as u')
    .innerJoin('core.organizationMembers as m', 'm.userId', 'u.id')
    .select('u.id')
    .where(sql`lower(u.email)`, '=', email.toLowerCase())
    .where('m.organizationId', '=', organizationId)
    .where('m.suspendedAt', 'is', null)
    .where('m.joinedAt', 'is not', null)
    .executeTakeFirst()
  return row?.id
}

export async function incidentChannel(db: Executor, integrationId: string, incidentId: string) {
  return db
    .selectFrom('divinux.incidentChatChannels')
    .select(['channelId', 'name', 'invited', 'postedThrough'])
    .where('integrationId', '=', integrationId)
    .where('incidentId', '=', incidentId)
    .executeTakeFirst()
}

/** The incident whose channel this is, in the workspace. */
export async function incidentOfChannel(db: Executor, integrationId: string, channelId: string) {
  const row = await db
    .selectFrom('divinux.incidentChatChannels')
    .select('incidentId')
    .where('integrationId', '=', integrationId)
    .where('channelId', '=', channelId)
    .executeTakeFirst()
  return row?.incidentId
}

export async function insertIncidentChannel(
  db: Executor,
  row: { incidentId: string; integrationId: string; organizationId: string; channelId: string; name: string },
): Promise<void> {
  await db.insertInto('divinux.incidentChatChannels').values(row).execute()
}

export async function updateIncidentChannel(
  db: Executor,
  integrationId: string,
  incidentId: string,
  change: { invited?: string[]; postedThrough?: Date },
): Promise<void> {
  await db
    .updateTable('divinux.incidentChatChannels')
    .set(change)
    .where('integrationId', '=', integrationId)
    .where('incidentId', '=', incidentId)
    .execute()
}

/** Timeline entries written after `since`, oldest first, with their authors' addresses. */
export async function timelineSince(db: Executor, organizationId: string, incidentId: string, since: Date, limit: number) {
  return db
    .selectFrom('divinux.incidentTimeline as t')
    .leftJoin('core.users as u', 'u.id', 't.authorId')
    .select(['t.kind', 't.body', 't.data', 't.createdAt', 'u.email as author'])
    .where('t.organizationId', '=', organizationId)
    .where('t.incidentId', '=', incidentId)
    .where('t.createdAt', '>', since)
    .orderBy('t.createdAt')
    .limit(limit)
    .execute()
}

/** The incident's people: its role holders and responders, with their addresses. */
export async function incidentPeople(db: Executor, organizationId: string, incidentId: string) {
  const roles = db
    .selectFrom('divinux.incidentRoles')
    .select('userId')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
  const responders = db
    .selectFrom('divinux.incidentResponders')
    .select('userId')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
  return db.selectFrom('core.users').select(['id', 'email']).where('id', 'in', roles.union(responders)).execute()
}

/**
 * Takes up to `limit` incidents whose chat is behind them for `leaseSeconds` (another replica
 * skips them meanwhile): one per organization per round, the organizations waiting longest first,
 * so a storm of incidents in one organization does not hold back another's. The lease is taken by
 * compare-and-set, so two replicas that pick the same incident take it once. Answers each with the
 * updated_at it will show, as text: a Date keeps milliseconds, PostgreSQL microseconds, and the
 * incident would stay behind.
 */
export async function claimIncidentsBehind(db: Executor, limit: number, leaseSeconds: number) {
  const free = sql`(chat_sync_until is null or chat_sync_until < now())`
  const claimed = await sql<{ id: string; organizationId: string; seenAt: string }>`
    update divinux.incidents set chat_sync_until = now() + make_interval(secs => ${leaseSeconds})
    where id in (
      select id from (
        select distinct on (organization_id) id, updated_at from divinux.incidents
        where (chat_synced_at is null or chat_synced_at < updated_at) and ${free}
        order by organization_id, updated_at
      ) oldest_per_organization
      order by updated_at
      limit ${limit}
    ) and ${free}
    returning id, organization_id as "organizationId", updated_at::text as "seenAt"`.execute(db)
  return claimed.rows
}

/** The incident's chat shows it as of `seen`; a change after that leaves it behind again. */
export async function markChatSynced(db: Executor, incidentId: string, seenAt: string): Promise<void> {
  await db
    .updateTable('divinux.incidents')
    .set({ chatSyncedAt: sql<Date>`${seenAt}::timestamptz`, chatSyncUntil: null })
    .where('id', '=', incidentId)
    .execute()
}

/** Tries again after `seconds` (Slack refused or could not be reached). */
export async function retryChatSyncAfter(db: Executor, incidentId: string, seconds: number): Promise<void> {
  await db
    .updateTable('divinux.incidents')
    .set({ chatSyncUntil: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .where('id', '=', incidentId)
    .execute()
}

/** An alert of the incident whose escalation is waiting for its next step, if any. */
export async function escalatingAlertOf(db: Executor, organizationId: string, incidentId: string) {
  const row = await db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.alertEscalations as e', 'e.alertId', 'l.alertId')
    .select('l.alertId')
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
    .where('e.state', '=', 'active')
    .orderBy('l.linkedAt')
    .limit(1)
    .executeTakeFirst()
  return row?.alertId
}

/** The organization's incident by its number (INC-<number>). */
export async function incidentByNumber(db: Executor, organizationId: string, number: number) {
  const row = await db
    .selectFrom('divinux.incidents')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('number', '=', number)
    .executeTakeFirst()
  return row?.id
}
