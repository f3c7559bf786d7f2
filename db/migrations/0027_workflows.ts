import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Workflow automation (issue 14): on a trigger, when every condition holds, ordered actions.
  // Conditions and actions are kept as validated JSON; the routes check what they reference.
  await db.schema
    .withSchema('divinux')
    .createTable('workflows')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('description', 'text')
    .addColumn('trigger', 'text', (col) =>
      col.notNull().check(sql`trigger in ('alert.created', 'alert.acknowledged', 'alert.resolved', 'deploy.recorded')`),
    )
    .addColumn('conditions', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('actions', 'jsonb', (col) => col.notNull())
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index workflows_org_name_idx on divinux.workflows (organization_id, lower(name))`.execute(db)
  await sql`create index workflows_org_trigger_idx on divinux.workflows (organization_id, trigger) where enabled`.execute(db)

  // One run per workflow and triggering event (the unique index makes a redelivered event start
  // nothing more). `definition` is the workflow as it ran; `conditions` and `actions` its outcomes.
  await db.schema
    .withSchema('divinux')
    .createTable('workflow_runs')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('workflow_id', 'uuid', (col) => col.notNull().references('divinux.workflows.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('trigger', 'text', (col) => col.notNull())
    .addColumn('event_key', 'text', (col) => col.notNull())
    .addColumn('alert_id', 'uuid', (col) => col.references('divinux.alerts.id').onDelete('set null'))
    .addColumn('deploy_event_id', 'uuid', (col) => col.references('divinux.deploy_events.id').onDelete('set null'))
    .addColumn('occurred_at', 'timestamptz', (col) => col.notNull())
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('queued')
        .check(sql`status in ('queued', 'running', 'succeeded', 'failed', 'not_matched')`),
    )
    .addColumn('definition', 'jsonb')
    .addColumn('conditions', 'jsonb')
    .addColumn('actions', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute()
  await sql`create unique index workflow_runs_event_idx on divinux.workflow_runs (workflow_id, event_key)`.execute(db)
  await sql`create index workflow_runs_workflow_idx on divinux.workflow_runs (workflow_id, created_at desc, id)`.execute(db)

  // An action may open the command room of an alert below P2, and change its priority.
  await db.schema.withSchema('divinux').alterTable('alerts').addColumn('command_room_opened_at', 'timestamptz').execute()
  await sql`alter table divinux.alert_events drop constraint if exists alert_events_type_check`.execute(db)
  await sql`alter table divinux.alert_events add constraint alert_events_type_check
    check (type in ('created', 'occurred', 'acknowledged', 'resolved', 'escalated', 'escalation_ended', 'silenced',
      'priority_changed', 'command_room_opened'))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.alert_events where type in ('priority_changed', 'command_room_opened')`.execute(db)
  await sql`alter table divinux.alert_events drop constraint if exists alert_events_type_check`.execute(db)
  await sql`alter table divinux.alert_events add constraint alert_events_type_check
    check (type in ('created', 'occurred', 'acknowledged', 'resolved', 'escalated', 'escalation_ended', 'silenced'))`.execute(db)
  await db.schema.withSchema('divinux').alterTable('alerts').dropColumn('command_room_opened_at').execute()
  await db.schema.withSchema('divinux').dropTable('workflow_runs').ifExists().execute()
  await db.schema.withSchema('divinux').dropTable('workflows').ifExists().execute()
}
