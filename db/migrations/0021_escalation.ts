import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Escalation policies (issue 14): ordered steps, each paging its targets and waiting its delay
  // for an acknowledgement, the whole repeated up to five times. Steps are one document.
  await db.schema
    .withSchema('divinux')
    .createTable('escalation_policies')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('description', 'text')
    .addColumn('repeat_count', 'integer', (col) =>
      col
        .notNull()
        .defaultTo(0)
        .check(sql`repeat_count between 0 and 5`),
    )
    .addColumn('steps', 'jsonb', (col) => col.notNull())
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index escalation_policies_org_name_idx on divinux.escalation_policies (organization_id, lower(name))`.execute(db)

  // Which policy a config's alerts escalate with: the first routing rule that matches, else this one.
  await db.schema
    .withSchema('divinux')
    .alterTable('webhook_configs')
    .addColumn('escalation_policy_id', 'uuid', (col) => col.references('divinux.escalation_policies.id').onDelete('set null'))
    .addColumn('routing_rules', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute()

  // One escalation per alert. `pending` rows are written with the alert, in its statement, and
  // started by a worker (routing, silences); from then on its position (round, step) is
  // compare-and-set by each step's job, and acknowledging or resolving the alert ends it.
  await db.schema
    .withSchema('divinux')
    .createTable('alert_escalations')
    .addColumn('alert_id', 'uuid', (col) => col.primaryKey().references('divinux.alerts.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('config_id', 'uuid', (col) => col.references('divinux.webhook_configs.id').onDelete('set null'))
    .addColumn('policy_id', 'uuid', (col) => col.references('divinux.escalation_policies.id').onDelete('set null'))
    .addColumn('state', 'text', (col) =>
      col.notNull().check(sql`state in ('pending', 'active', 'silenced', 'unrouted', 'acknowledged', 'resolved', 'exhausted')`),
    )
    .addColumn('round', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('step', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_at', 'timestamptz')
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index alert_escalations_pending_idx on divinux.alert_escalations (created_at) where state = 'pending'`.execute(db)

  // Every attempt to reach someone: one row per person, channel and step of an escalation.
  await db.schema
    .withSchema('divinux')
    .createTable('notification_attempts')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('alert_id', 'uuid', (col) => col.notNull().references('divinux.alerts.id').onDelete('cascade'))
    .addColumn('round', 'integer', (col) => col.notNull())
    .addColumn('step', 'integer', (col) => col.notNull())
    .addColumn('user_id', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('target_type', 'text', (col) => col.notNull())
    .addColumn('target_id', 'uuid', (col) => col.notNull())
    .addColumn('channel', 'text', (col) =>
      col.notNull().check(sql`channel in ('email', 'sms', 'voice', 'push', 'chat', 'webhook', 'none')`),
    )
    .addColumn('recipient', 'text')
    .addColumn('outbox_message_id', 'uuid')
    .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('queued', 'sent', 'delivered', 'failed')`))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  // Nothing pages one person twice on one channel for one step, whatever retries or replicas do.
  await sql`create unique index notification_attempts_once on divinux.notification_attempts
    (alert_id, round, step, coalesce(user_id, target_id), channel)`.execute(db)

  // Single-use links that acknowledge an alert; only the SHA-256 of the token is kept.
  await db.schema
    .withSchema('divinux')
    .createTable('alert_ack_links')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('alert_id', 'uuid', (col) => col.notNull().references('divinux.alerts.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('core.users.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()

  // The timeline says when an escalation paged, ran out or was held by a silence.
  await sql`alter table divinux.alert_events drop constraint if exists alert_events_type_check`.execute(db)
  await sql`alter table divinux.alert_events add constraint alert_events_type_check
    check (type in ('created', 'occurred', 'acknowledged', 'resolved', 'escalated', 'escalation_ended', 'silenced'))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.alert_events drop constraint if exists alert_events_type_check`.execute(db)
  await sql`alter table divinux.alert_events add constraint alert_events_type_check
    check (type in ('created', 'occurred', 'acknowledged', 'resolved'))`.execute(db)
  await db.schema.withSchema('divinux').dropTable('alert_ack_links').ifExists().execute()
  await db.schema.withSchema('divinux').dropTable('notification_attempts').ifExists().execute()
  await db.schema.withSchema('divinux').dropTable('alert_escalations').ifExists().execute()
  await db.schema
    .withSchema('divinux')
    .alterTable('webhook_configs')
    .dropColumn('routing_rules')
    .dropColumn('escalation_policy_id')
    .execute()
  await db.schema.withSchema('divinux').dropTable('escalation_policies').ifExists().execute()
}
