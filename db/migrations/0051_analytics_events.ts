import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Product usage telemetry (Segment-style `track` events), partitioned by UTC month of when the
  // event happened: retention drops whole months. The key holds the partition column, as
  // PostgreSQL requires; a retried event repeats its messageId and timestamp, so it still meets
  // its first copy.
  await sql`
    create table core.analytics_events (
      organization_id uuid not null references core.organizations(id) on delete cascade,
      message_id text not null,
      event text not null,
      user_id uuid references core.users(id) on delete set null,
      anonymous_id text,
      properties jsonb not null default '{}',
      context jsonb not null default '{}',
      source text not null check (source in ('client', 'server')),
      occurred_at timestamptz not null,
      received_at timestamptz not null default now(),
      primary key (organization_id, message_id, occurred_at)
    ) partition by range (occurred_at)`.execute(db)
  await sql`create index analytics_events_event_idx on core.analytics_events (organization_id, event, occurred_at)`.execute(db)

  // The months around the migration; the services create the ones ahead as time passes.
  const now = new Date()
  for (let offset = -1; offset <= 2; offset++) {
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1))
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset + 1, 1))
    const name = `analytics_events_p${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`
    await sql`
      create table ${sql.id('core', name)} partition of core.analytics_events
        for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(db)
  }

  // What usage summaries read: events per organization, UTC day and event name, and who did each
  // event each day (a user id, or `anon:` and the anonymous id), with the event '' for "any
  // event" (names are never empty), so a bucket's distinct users are read from its own rows. Written with the events, in
  // the same statement, counting only rows that were new, so a retried batch counts once.
  await sql`
    create table core.analytics_daily (
      organization_id uuid not null references core.organizations(id) on delete cascade,
      day date not null,
      event text not null,
      events bigint not null,
      primary key (organization_id, day, event)
    )`.execute(db)
  await sql`
    create table core.analytics_daily_users (
      organization_id uuid not null references core.organizations(id) on delete cascade,
      day date not null,
      event text not null,
      user_key text not null,
      primary key (organization_id, event, day, user_key)
    )`.execute(db)

  await sql`alter table core.reports drop constraint reports_type_check`.execute(db)
  await sql`alter table core.reports add constraint reports_type_check check (type in ('audit-log', 'incidents', 'uptime', 'ai-usage', 'usage'))`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists core.analytics_daily_users`.execute(db)
  await sql`drop table if exists core.analytics_daily`.execute(db)
  await sql`drop table if exists core.analytics_events`.execute(db)
}
