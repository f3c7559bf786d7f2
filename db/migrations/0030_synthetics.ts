import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Synthetic checks (issue 16). `next_due_at` is the due time the check's next scheduling job
  // carries: a job whose due time is no longer the check's (paused, frequency changed, run
  // twice) finds it changed and does nothing, so no run is doubled.
  await db.schema
    .withSchema('divinux')
    .createTable('synthetic_checks')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('http', 'tcp', 'dns', 'tls', 'heartbeat')`))
    .addColumn('request', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('frequency_seconds', 'integer', (col) => col.notNull().check(sql`frequency_seconds between 30 and 86400`))
    .addColumn('timeout_ms', 'integer', (col) => col.notNull().check(sql`timeout_ms between 100 and 30000`))
    .addColumn('degraded_ms', 'integer')
    .addColumn('regions', sql`text[]`, (col) => col.notNull())
    .addColumn('retries', 'integer', (col) =>
      col
        .notNull()
        .defaultTo(0)
        .check(sql`retries between 0 and 5`),
    )
    .addColumn('alert_after_failures', 'integer', (col) =>
      col
        .notNull()
        .defaultTo(1)
        .check(sql`alert_after_failures between 1 and 20`),
    )
    .addColumn('alert_quorum', 'text', (col) =>
      col
        .notNull()
        .defaultTo('any')
        .check(sql`alert_quorum in ('any', 'majority', 'all')`),
    )
    .addColumn('alert_priority', 'text', (col) =>
      col
        .notNull()
        .defaultTo('P2')
        .check(sql`alert_priority in ('P1', 'P2', 'P3', 'P4', 'P5')`),
    )
    .addColumn('escalation_policy_id', 'uuid', (col) => col.references('divinux.escalation_policies.id').onDelete('set null'))
    .addColumn('status_component_ids', sql`uuid[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('paused', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('state', 'text', (col) =>
      col
        .notNull()
        .defaultTo('unknown')
        .check(sql`state in ('unknown', 'passing', 'degraded', 'failing')`),
    )
    .addColumn('state_changed_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('next_due_at', 'timestamptz')
    .addColumn('heartbeat_token_hash', 'text')
    .addColumn('last_ping_at', 'timestamptz')
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index synthetic_checks_org_idx on divinux.synthetic_checks (organization_id, created_at)`.execute(db)
  await sql`create unique index synthetic_checks_heartbeat_idx on divinux.synthetic_checks (heartbeat_token_hash) where heartbeat_token_hash is not null`.execute(
    db,
  )

  // Secrets checks refer to as {{secret:NAME}}: AES-256-GCM under SYNTHETICS_SECRETS_KEY, never returned.
  await db.schema
    .withSchema('divinux')
    .createTable('synthetic_secrets')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'`))
    .addColumn('sealed', 'bytea', (col) => col.notNull())
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index synthetic_secrets_name_idx on divinux.synthetic_secrets (organization_id, name)`.execute(db)

  // Relays: private locations running the checks of their regions. Their key is kept as a hash.
  await db.schema
    .withSchema('divinux')
    .createTable('synthetic_relays')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('regions', sql`text[]`, (col) => col.notNull())
    .addColumn('key_hash', 'text', (col) => col.notNull())
    .addColumn('heartbeat_seconds', 'integer', (col) =>
      col
        .notNull()
        .defaultTo(10)
        .check(sql`heartbeat_seconds between 1 and 300`),
    )
    .addColumn('last_heartbeat_at', 'timestamptz')
    .addColumn('version', 'text')
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index synthetic_relays_key_idx on divinux.synthetic_relays (key_hash)`.execute(db)
  await sql`create index synthetic_relays_org_idx on divinux.synthetic_relays (organization_id)`.execute(db)

  // One run per check, region and due time (the unique index is what keeps a run from being
  // doubled), with its result once done: every attempt in `attempts`, the last one's outcome in
  // the columns the reads filter and aggregate on.
  await db.schema
    .withSchema('divinux')
    .createTable('synthetic_runs')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('check_id', 'uuid', (col) => col.notNull().references('divinux.synthetic_checks.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('region', 'text', (col) => col.notNull())
    .addColumn('due_at', 'timestamptz', (col) => col.notNull())
    .addColumn('state', 'text', (col) =>
      col
        .notNull()
        .defaultTo('queued')
        .check(sql`state in ('queued', 'leased', 'done', 'missed')`),
    )
    .addColumn('relay_id', 'uuid', (col) => col.references('divinux.synthetic_relays.id').onDelete('set null'))
    .addColumn('leased_until', 'timestamptz')
    .addColumn('result_id', 'text')
    .addColumn('status', 'text', (col) => col.check(sql`status in ('passing', 'degraded', 'failing')`))
    .addColumn('attempts', 'jsonb')
    .addColumn('total_ms', 'double precision')
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index synthetic_runs_due_idx on divinux.synthetic_runs (check_id, region, due_at)`.execute(db)
  await sql`create index synthetic_runs_results_idx on divinux.synthetic_runs (check_id, finished_at desc) where state = 'done'`.execute(db)
  await sql`create index synthetic_runs_waiting_idx on divinux.synthetic_runs (region, due_at) where state in ('queued', 'leased')`.execute(
    db,
  )
  await sql`create index synthetic_runs_age_idx on divinux.synthetic_runs (created_at)`.execute(db)
  await sql`create unique index synthetic_runs_result_idx on divinux.synthetic_runs (relay_id, result_id) where result_id is not null`.execute(
    db,
  )

  // Hourly and daily aggregates, kept after the raw runs are removed.
  await db.schema
    .withSchema('divinux')
    .createTable('synthetic_rollups')
    .addColumn('check_id', 'uuid', (col) => col.notNull().references('divinux.synthetic_checks.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('region', 'text', (col) => col.notNull())
    .addColumn('interval', 'text', (col) => col.notNull().check(sql`interval in ('hour', 'day')`))
    .addColumn('bucket_start', 'timestamptz', (col) => col.notNull())
    .addColumn('runs', 'integer', (col) => col.notNull())
    .addColumn('failures', 'integer', (col) => col.notNull())
    .addColumn('degraded', 'integer', (col) => col.notNull())
    .addColumn('avg_ms', 'double precision')
    .addColumn('p50_ms', 'double precision')
    .addColumn('p95_ms', 'double precision')
    .addColumn('p99_ms', 'double precision')
    .addPrimaryKeyConstraint('synthetic_rollups_pk', ['check_id', 'region', 'interval', 'bucket_start'])
    .execute()

  // A status page component may follow checks (failing: major outage, degraded: degraded
  // performance): each linked check's latest verdict, `{ "<checkId>": { "status", "at" } }`, is
  // one more thing the component takes the worst of.
  await db.schema
    .withSchema('divinux')
    .alterTable('status_components')
    .addColumn('check_statuses', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').alterTable('status_components').dropColumn('check_statuses').execute()
  for (const table of ['synthetic_rollups', 'synthetic_runs', 'synthetic_relays', 'synthetic_secrets', 'synthetic_checks'])
    await db.schema.withSchema('divinux').dropTable(table).ifExists().execute()
}
