import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // An organization's incident settings (alerting's incidents module): whether an incident that
  // alerts opened resolves when the last of them resolves (the default; decision 0019, "State flows
  // both ways"). No row: the defaults.
  await sql`
    create table divinux.incident_settings (
      organization_id uuid primary key references core.organizations (id) on delete cascade,
      resolve_with_alerts boolean not null default true,
      updated_by uuid references core.users (id) on delete set null,
      updated_at timestamptz not null default now()
    )`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.incident_settings`.execute(db)
}
