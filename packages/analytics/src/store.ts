import { sql } from 'kysely'
import type { Executor } from '@svc/db'

/** Who sent an event: a client through the ingestion API, or one of our services itself. */
export type EventSource = 'client' | 'server'

/** An event ready to store: validated, its properties through the privacy rule. */
export interface AnalyticsEvent {
  messageId: string
  event: string
  userId: string | null
  anonymousId: string | null
  properties: Record<string, unknown>
  context: Record<string, unknown>
  occurredAt: Date
}

/**
 * Stores events of one organization in one statement and counts them into the daily summaries
 * in the same statement, from the rows actually inserted: a message id seen before (with its
 * timestamp, the table's key) is skipped and counted nowhere, so a retried batch is harmless.
 * Summary rows are upserted in key order, so concurrent batches of one organization take their
 * row locks in the same order. Answers the message ids stored now.
 */
export async function storeEvents(
  db: Executor,
  organizationId: string,
  source: EventSource,
  events: readonly AnalyticsEvent[],
): Promise<Set<string>> {
  if (events.length === 0) return new Set()
  const rows = JSON.stringify(
    events.map((event) => ({
      message_id: event.messageId,
      event: event.event,
      user_id: event.userId,
      anonymous_id: event.anonymousId,
      properties: event.properties,
      context: event.context,
      occurred_at: event.occurredAt.toISOString(),
    })),
  )
  const { rows: stored } = await sql<{ messageId: string }>`
    with incoming as (
      select * from jsonb_to_recordset(${rows}::jsonb)
        as t(message_id text, event text, user_id uuid, anonymous_id text, properties jsonb, context jsonb, occurred_at timestamptz)
    ), inserted as (
      insert into core.analytics_events (organization_id, message_id, event, user_id, anonymous_id, properties, context, source, occurred_at)
      select ${organizationId}::uuid, message_id, event, user_id, anonymous_id, properties, context, ${source}, occurred_at from incoming
      on conflict do nothing
      returning message_id, event, user_id, anonymous_id, (occurred_at at time zone 'UTC')::date as day
    ), daily as (
      insert into core.analytics_daily (organization_id, day, event, events)
      select ${organizationId}::uuid, day, event, count(*) from inserted group by day, event order by day, event
      on conflict (organization_id, day, event) do update set events = core.analytics_daily.events + excluded.events
    ), active as (
      insert into core.analytics_daily_users (organization_id, event, day, user_key)
      select distinct ${organizationId}::uuid, names.event, inserted.day, coalesce(inserted.user_id::text, 'anon:' || inserted.anonymous_id)
        from inserted cross join lateral (values (inserted.event), ('')) as names(event)
       where inserted.user_id is not null or inserted.anonymous_id is not null
      order by 2, 3, 4
      on conflict do nothing
    )
    select message_id from inserted`.execute(db)
  return new Set(stored.map((row) => row.messageId))
}
