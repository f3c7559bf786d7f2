import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Similar past incidents are found by trigram similarity of their titles.
  await sql`create extension if not exists pg_trgm`.execute(db)

  await db.schema
    .withSchema('divinux')
    .createTable('analyses')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    // The incident reference (ARCHITECTURE.md): which surface, and the incident's id there.
    .addColumn('source_product', 'text', (col) => col.notNull().check(sql`source_product in ('alerting', 'synthetics', 'statuspages')`))
    .addColumn('incident_id', 'uuid', (col) => col.notNull())
    .addColumn('trigger', 'text', (col) => col.notNull().check(sql`trigger in ('automatic', 'manual')`))
    .addColumn('requested_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('pending')
        .check(sql`status in ('pending', 'processing', 'completed', 'failed')`),
    )
    .addColumn('summary', 'text')
    .addColumn('root_cause', 'text')
    .addColumn('recommendations', 'text')
    .addColumn('severity', 'text', (col) => col.check(sql`severity in ('critical', 'high', 'medium', 'low')`))
    .addColumn('suspected_deploy_id', 'uuid', (col) => col.references('divinux.deploy_events.id').onDelete('set null'))
    .addColumn('evidence', 'jsonb')
    .addColumn('provider', 'text')
    .addColumn('model', 'text')
    .addColumn('prompt_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  // One active analysis per incident: concurrent requests for one incident meet here.
  await sql`create unique index analyses_active_incident_key on divinux.analyses (organization_id, source_product, incident_id) where status in ('pending', 'processing')`.execute(
    db,
  )
  await sql`create index analyses_org_created_idx on divinux.analyses (organization_id, created_at desc, id desc)`.execute(db)
  await sql`create index analyses_org_incident_idx on divinux.analyses (organization_id, source_product, incident_id, created_at desc)`.execute(
    db,
  )

  await db.schema
    .withSchema('divinux')
    .createTable('analysis_events')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('analysis_id', 'uuid', (col) => col.notNull().references('divinux.analyses.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) =>
      col.notNull().check(sql`type in ('requested', 'processing', 'retry_scheduled', 'completed', 'failed')`),
    )
    .addColumn('data', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`clock_timestamp()`))
    .execute()
  await sql`create index analysis_events_analysis_idx on divinux.analysis_events (organization_id, analysis_id, created_at)`.execute(db)

  // Limits per calendar month (UTC); null: no limit. Thresholds are percentages of the limits.
  await db.schema
    .withSchema('divinux')
    .createTable('tenant_budgets')
    .addColumn('organization_id', 'uuid', (col) => col.primaryKey().references('core.organizations.id').onDelete('cascade'))
    .addColumn('monthly_analysis_limit', 'integer', (col) => col.check(sql`monthly_analysis_limit >= 0`))
    .addColumn('monthly_token_limit', 'bigint', (col) => col.check(sql`monthly_token_limit >= 0`))
    .addColumn('monthly_cost_limit_usd', sql`numeric(12, 2)`, (col) => col.check(sql`monthly_cost_limit_usd >= 0`))
    .addColumn('alert_thresholds', sql`integer[]`, (col) => col.notNull().defaultTo(sql`'{50,80,100}'`))
    .addColumn('updated_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()

  // Every model call's consumption (analyses now, RCA drafts later): the budget's ledger.
  await db.schema
    .withSchema('divinux')
    .createTable('ai_usage')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('feature', 'text', (col) => col.notNull().check(sql`feature in ('analysis', 'rca_draft')`))
    .addColumn('reference_id', 'uuid', (col) => col.notNull())
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('model', 'text', (col) => col.notNull())
    .addColumn('prompt_tokens', 'integer', (col) => col.notNull())
    .addColumn('completion_tokens', 'integer', (col) => col.notNull())
    .addColumn('cost_usd', sql`numeric(12, 6)`, (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index ai_usage_org_created_idx on divinux.ai_usage (organization_id, created_at)`.execute(db)

  // What the budget did: thresholds crossed (once per period each) and analyses it skipped.
  await db.schema
    .withSchema('divinux')
    .createTable('usage_events')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('period_start', 'date', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull().check(sql`type in ('threshold_crossed', 'analysis_skipped')`))
    .addColumn('threshold', 'integer')
    .addColumn('data', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index usage_events_threshold_key on divinux.usage_events (organization_id, period_start, threshold) where type = 'threshold_crossed'`.execute(
    db,
  )
  await sql`create index usage_events_org_period_idx on divinux.usage_events (organization_id, period_start, created_at)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['usage_events', 'ai_usage', 'tenant_budgets', 'analysis_events', 'analyses']) {
    await db.schema.withSchema('divinux').dropTable(table).ifExists().execute()
  }
}
