import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A service's support hours: its P1/P2 alerts are high urgency within them and low outside
  // (PagerDuty's urgency by support hours); people's notification rules differ by urgency.
  await sql`
    create table divinux.service_support_hours (
      organization_id uuid not null references core.organizations(id) on delete cascade,
      service text not null,
      time_zone text not null,
      days smallint[] not null check (cardinality(days) between 1 and 7 and days <@ array[1, 2, 3, 4, 5, 6, 7]::smallint[]),
      start_time text not null check (start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      end_time text not null check (end_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      updated_by uuid references core.users(id) on delete set null,
      updated_at timestamptz not null default now(),
      primary key (organization_id, service)
    )`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table divinux.service_support_hours`.execute(db)
}
