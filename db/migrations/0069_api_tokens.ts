import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Organization API tokens for automation (decision 0030): a token acts on its organization's
  // routes with the product roles it was given, never more than its creator holds at the time of
  // each request; only its SHA-256 is kept, as for SCIM tokens.
  await sql`
    create table core.api_tokens (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations (id) on delete cascade,
      name text not null,
      token_prefix text not null,
      token_hash text not null unique,
      product_roles jsonb not null default '{}'::jsonb,
      created_by uuid references core.users (id) on delete set null,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`.execute(db)
  await sql`create index api_tokens_org_idx on core.api_tokens (organization_id, created_at desc)`.execute(db)
  // What a token did is the audit log's: an actor of its own kind, beside the person it acts for.
  await sql`alter table core.audit_logs drop constraint audit_logs_actor_type_check`.execute(db)
  await sql`
    alter table core.audit_logs add constraint audit_logs_actor_type_check
      check (actor_type in ('user', 'scim_token', 'api_token', 'system'))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from core.audit_logs where actor_type = 'api_token'`.execute(db)
  await sql`alter table core.audit_logs drop constraint audit_logs_actor_type_check`.execute(db)
  await sql`
    alter table core.audit_logs add constraint audit_logs_actor_type_check
      check (actor_type in ('user', 'scim_token', 'system'))`.execute(db)
  await sql`drop table if exists core.api_tokens`.execute(db)
}
