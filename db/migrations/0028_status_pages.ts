import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Status pages (issue 15). `revision` grows with every change to anything a public document
  // shows, so replicas caching those documents know theirs are stale from one cheap read.
  await db.schema
    .withSchema('divinux')
    .createTable('status_pages')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('slug', 'text', (col) => col.notNull().check(sql`slug ~ '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'`))
    .addColumn('time_zone', 'text', (col) => col.notNull().defaultTo('UTC'))
    .addColumn('custom_domain', 'text', (col) => col.check(sql`custom_domain = lower(custom_domain)`))
    .addColumn('published', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('allow_subscribers', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('support_url', 'text')
    .addColumn('revision', 'bigint', (col) => col.notNull().defaultTo(1))
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index status_pages_slug_idx on divinux.status_pages (slug)`.execute(db)
  await sql`create unique index status_pages_custom_domain_idx on divinux.status_pages (custom_domain) where custom_domain is not null`.execute(
    db,
  )
  await sql`create index status_pages_org_idx on divinux.status_pages (organization_id, created_at)`.execute(db)

  await db.schema
    .withSchema('divinux')
    .createTable('status_component_groups')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('description', 'text')
    .addColumn('position', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index status_component_groups_page_idx on divinux.status_component_groups (page_id, position)`.execute(db)

  const componentStatus = sql`('operational', 'degraded_performance', 'partial_outage', 'major_outage', 'under_maintenance')`
  await db.schema
    .withSchema('divinux')
    .createTable('status_components')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('group_id', 'uuid', (col) => col.references('divinux.status_component_groups.id').onDelete('set null'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('description', 'text')
    .addColumn('position', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('operational')
        .check(sql`status in ${componentStatus}`),
    )
    .addColumn('show_uptime', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('alert_services', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index status_components_page_idx on divinux.status_components (page_id, position)`.execute(db)
  await sql`create index status_components_services_idx on divinux.status_components using gin (alert_services)`.execute(db)

  // Every status a component took, from when: uptime is computed from these intervals.
  await db.schema
    .withSchema('divinux')
    .createTable('status_component_changes')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('component_id', 'uuid', (col) => col.notNull().references('divinux.status_components.id').onDelete('cascade'))
    .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ${componentStatus}`))
    .addColumn('changed_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index status_component_changes_component_idx on divinux.status_component_changes (component_id, changed_at)`.execute(db)

  // Incidents and scheduled maintenances are one kind of record, as in Statuspage: a maintenance
  // is an incident with a window, its own statuses and the impact `maintenance`.
  await db.schema
    .withSchema('divinux')
    .createTable('status_incidents')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('incident', 'maintenance')`))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 200`))
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('impact', 'text', (col) => col.notNull())
    .addColumn('published', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('alert_id', 'uuid')
    .addColumn('workflow_id', 'uuid')
    .addColumn('scheduled_for', 'timestamptz')
    .addColumn('scheduled_until', 'timestamptz')
    .addColumn('auto_start', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('auto_complete', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('started_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('monitoring_at', 'timestamptz')
    .addColumn('resolved_at', 'timestamptz')
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'status_incidents_kind_status_check',
      sql`(kind = 'incident' and status in ('investigating', 'identified', 'monitoring', 'resolved') and impact in ('none', 'minor', 'major', 'critical'))
        or (kind = 'maintenance' and status in ('scheduled', 'in_progress', 'verifying', 'completed', 'cancelled') and impact = 'maintenance'
            and scheduled_for is not null and scheduled_until > scheduled_for)`,
    )
    .execute()
  await sql`create index status_incidents_page_idx on divinux.status_incidents (page_id, kind, created_at desc)`.execute(db)
  await sql`create index status_incidents_org_idx on divinux.status_incidents (organization_id, created_at desc)`.execute(db)
  // One open draft per alert and workflow: a workflow run updates it rather than opening another.
  await sql`create unique index status_incidents_alert_idx on divinux.status_incidents (page_id, alert_id)
    where alert_id is not null and resolved_at is null`.execute(db)

  await db.schema
    .withSchema('divinux')
    .createTable('status_incident_components')
    .addColumn('incident_id', 'uuid', (col) => col.notNull().references('divinux.status_incidents.id').onDelete('cascade'))
    .addColumn('component_id', 'uuid', (col) => col.notNull().references('divinux.status_components.id').onDelete('cascade'))
    .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ${componentStatus}`))
    .addPrimaryKeyConstraint('status_incident_components_pk', ['incident_id', 'component_id'])
    .execute()
  await sql`create index status_incident_components_component_idx on divinux.status_incident_components (component_id)`.execute(db)

  await db.schema
    .withSchema('divinux')
    .createTable('status_incident_updates')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('incident_id', 'uuid', (col) => col.notNull().references('divinux.status_incidents.id').onDelete('cascade'))
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('affected_components', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('display_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index status_incident_updates_incident_idx on divinux.status_incident_updates (incident_id, display_at desc)`.execute(db)

  // Subscribers: e-mail ones confirm by a link before anything is sent; webhook ones sign with
  // their secret (kept as given: it signs every delivery). The unsubscribe token is in every
  // message, so it is kept too; the confirmation token is sent once and kept only as its hash.
  await db.schema
    .withSchema('divinux')
    .createTable('status_subscribers')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('email', 'webhook')`))
    .addColumn('email', 'text')
    .addColumn('url', 'text')
    .addColumn('secret', 'text')
    .addColumn('component_ids', sql`uuid[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('confirm_token_hash', 'text')
    .addColumn('unsubscribe_token', 'text', (col) => col.notNull())
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'status_subscribers_target_check',
      sql`(kind = 'email' and email is not null and url is null) or (kind = 'webhook' and url is not null and secret is not null and email is null)`,
    )
    .execute()
  await sql`create unique index status_subscribers_email_idx on divinux.status_subscribers (page_id, lower(email)) where kind = 'email'`.execute(
    db,
  )
  await sql`create unique index status_subscribers_url_idx on divinux.status_subscribers (page_id, url) where kind = 'webhook'`.execute(db)
  await sql`create unique index status_subscribers_unsubscribe_idx on divinux.status_subscribers (unsubscribe_token)`.execute(db)
  await sql`create unique index status_subscribers_confirm_idx on divinux.status_subscribers (confirm_token_hash) where confirm_token_hash is not null`.execute(
    db,
  )

  // Which subscribers an update was sent to: a notification job run twice sends nothing twice.
  await db.schema
    .withSchema('divinux')
    .createTable('status_notifications')
    .addColumn('update_id', 'uuid', (col) => col.notNull().references('divinux.status_incident_updates.id').onDelete('cascade'))
    .addColumn('subscriber_id', 'uuid', (col) => col.notNull().references('divinux.status_subscribers.id').onDelete('cascade'))
    .addColumn('message_id', 'uuid', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('status_notifications_pk', ['update_id', 'subscriber_id'])
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'status_notifications',
    'status_subscribers',
    'status_incident_updates',
    'status_incident_components',
    'status_incidents',
    'status_component_changes',
    'status_components',
    'status_component_groups',
    'status_pages',
  ]) {
    await db.schema.withSchema('divinux').dropTable(table).ifExists().execute()
  }
}
