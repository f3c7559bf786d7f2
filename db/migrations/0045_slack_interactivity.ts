import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A Slack app's signing secret turns its messages' buttons and its slash command on; with
  // `incident_channels` every new incident gets a channel of its own (decision 0020).
  await sql`
    alter table divinux.chat_integrations
      add column signing_secret text,
      add column incident_channels boolean not null default false`.execute(db)

  // Messages we posted through Slack's Web API that show an alert or an incident, so they can be
  // rewritten (chat.update) when what they show changes.
  await sql`
    create table divinux.slack_messages (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      integration_id uuid not null references divinux.chat_integrations(id) on delete cascade,
      channel text not null,
      ts text not null,
      alert_id uuid references divinux.alerts(id) on delete cascade,
      incident_id uuid references divinux.incidents(id) on delete cascade,
      created_at timestamptz not null default now(),
      unique (integration_id, channel, ts),
      check ((alert_id is null) <> (incident_id is null))
    )`.execute(db)
  await sql`create index slack_messages_incident_idx on divinux.slack_messages (incident_id) where incident_id is not null`.execute(db)
  await sql`create index slack_messages_alert_idx on divinux.slack_messages (alert_id) where alert_id is not null`.execute(db)

  // Who a Slack user is, by the e-mail address Slack's users.info answers; kept an hour.
  await sql`
    create table divinux.slack_users (
      integration_id uuid not null references divinux.chat_integrations(id) on delete cascade,
      slack_user_id text not null,
      email text,
      fetched_at timestamptz not null default now(),
      primary key (integration_id, slack_user_id)
    )`.execute(db)

  // The channel an incident got in a workspace, and how far its timeline was posted there.
  await sql`
    create table divinux.incident_chat_channels (
      incident_id uuid not null references divinux.incidents(id) on delete cascade,
      integration_id uuid not null references divinux.chat_integrations(id) on delete cascade,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      channel_id text not null,
      name text not null,
      invited text[] not null default '{}',
      posted_through timestamptz not null default now(),
      created_at timestamptz not null default now(),
      primary key (incident_id, integration_id)
    )`.execute(db)
  await sql`create index incident_chat_channels_channel_idx on divinux.incident_chat_channels (integration_id, channel_id)`.execute(db)

  // People who joined an incident to work it.
  await sql`
    create table divinux.incident_responders (
      incident_id uuid not null references divinux.incidents(id) on delete cascade,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      user_id uuid not null references core.users(id) on delete cascade,
      via text not null check (via in ('api', 'chat')),
      added_by uuid references core.users(id) on delete set null,
      added_at timestamptz not null default now(),
      primary key (incident_id, user_id)
    )`.execute(db)

  // Chat follows every change of an incident: a change (a timeline entry) moves updated_at, and
  // an incident whose chat messages are behind it is found through this partial index.
  await sql`alter table divinux.incidents add column chat_synced_at timestamptz, add column chat_sync_until timestamptz`.execute(db)
  await sql`update divinux.incidents set chat_synced_at = updated_at`.execute(db)
  await sql`
    create index incidents_chat_behind_idx on divinux.incidents (updated_at)
      where chat_synced_at is null or chat_synced_at < updated_at`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index divinux.incidents_chat_behind_idx`.execute(db)
  await sql`alter table divinux.incidents drop column chat_synced_at, drop column chat_sync_until`.execute(db)
  await sql`drop table divinux.incident_responders`.execute(db)
  await sql`drop table divinux.incident_chat_channels`.execute(db)
  await sql`drop table divinux.slack_users`.execute(db)
  await sql`drop table divinux.slack_messages`.execute(db)
  await sql`alter table divinux.chat_integrations drop column signing_secret, drop column incident_channels`.execute(db)
}
