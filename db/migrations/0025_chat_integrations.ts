import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Where alerts are posted for a team to see (issue 14): Slack, Microsoft Teams and Discord
  // incoming webhooks, or Slack's Web API with a bot token. The URL and token are credentials:
  // kept as given (sending needs them), never answered after they are set.
  await db.schema
    .withSchema('divinux')
    .createTable('chat_integrations')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('slack', 'teams', 'discord', 'slack_bot')`))
    .addColumn('webhook_url', 'text')
    .addColumn('bot_token', 'text')
    .addColumn('channel', 'text')
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'chat_integrations_target',
      sql`(kind = 'slack_bot' and bot_token is not null and channel is not null) or (kind <> 'slack_bot' and webhook_url is not null)`,
    )
    .execute()
  await sql`create unique index chat_integrations_org_name_idx on divinux.chat_integrations (organization_id, lower(name))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('chat_integrations').ifExists().execute()
}
