import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The service catalog (issue 55; alerting's on-call module): a service is a stable key an
  // organization names its alerts by, with its owner team, escalation policy, tier, tags, links
  // and the other names its alerts may carry (aliases). Keys and aliases are kept lower-case;
  // one name names at most one service of an organization (services/queries.ts checks aliases).
  await sql`
    create table divinux.services (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations (id) on delete cascade,
      key text not null check (key ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
      name text not null,
      description text,
      owner_team_id uuid references divinux.teams (id) on delete set null,
      escalation_policy_id uuid references divinux.escalation_policies (id) on delete set null,
      tier smallint check (tier between 1 and 4),
      tags text[] not null default '{}',
      links jsonb not null default '{}'::jsonb,
      aliases text[] not null default '{}',
      created_by uuid references core.users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (organization_id, key)
    )`.execute(db)
  await sql`create index services_aliases_idx on divinux.services using gin (aliases)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.services`.execute(db)
}
