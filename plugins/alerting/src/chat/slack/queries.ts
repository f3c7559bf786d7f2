import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import { alertIdsOfIncident, chatBehind } from '../../incidents/index.js'

// The tables of Slack interactivity (migration 0045): messages we can rewrite, who a Slack user
// is, and the channel each incident got. Each query is scoped by organization or by integration
// (an integration belongs to one organization).

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
    .where((eb) => eb.or([eb('m.incidentId', '=', incidentId), eb('m.alertId', 'in', alertIdsOfIncident(db, organizationId, incidentId))]))
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

/**
 * Asks the Slack app for the incident's own channel (a workflow's create_incident_channel), and
 * leaves the incident's chat behind so the sync opens it; false when it was asked already.
 */
export async function requestIncidentChannel(
  db: Executor,
  request: { organizationId: string; incidentId: string; integrationId: string },
): Promise<boolean> {
  const inserted = await db
    .insertInto('divinux.incidentChannelRequests')
    .values(request)
    .onConflict((conflict) => conflict.columns(['incidentId', 'integrationId']).doNothing())
    .returning('incidentId')
    .executeTakeFirst()
  if (inserted) await chatBehind(db, request.organizationId, request.incidentId)
  return inserted !== undefined
}

export async function incidentChannelRequested(db: Executor, integrationId: string, incidentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.incidentChannelRequests')
    .select('incidentId')
    .where('integrationId', '=', integrationId)
    .where('incidentId', '=', incidentId)
    .executeTakeFirst()
  return row !== undefined
}
