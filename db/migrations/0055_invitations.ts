import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A membership created by an invitation grants nothing until the invitation is accepted
  // (decision 0023): `joined_at` is null until then. Every membership that exists now, and every
  // one made without an invitation (the organization's creator, SCIM), has joined.
  await sql`alter table core.organization_members add column joined_at timestamptz default now()`.execute(db)
  await sql`update core.organization_members set joined_at = created_at`.execute(db)

  // The invitation itself: what was offered to which address, by whom, until when. The token is
  // kept only as its SHA-256 (it is a bearer secret in an e-mail). `member_id` is the membership it
  // holds open; removing that membership (revoking, or deleting the member) leaves the record.
  await sql`
    create table core.invitations (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      member_id uuid references core.organization_members(id) on delete set null,
      email text not null,
      role text not null check (role in ('member', 'admin', 'owner')),
      product_roles jsonb not null default '{}'::jsonb,
      invited_by uuid references core.users(id) on delete set null,
      token_hash text not null unique,
      status text not null default 'pending' check (status in ('pending', 'accepted', 'revoked')),
      expires_at timestamptz not null,
      sent_count integer not null default 1,
      last_sent_at timestamptz not null default now(),
      accepted_at timestamptz,
      accepted_by uuid references core.users(id) on delete set null,
      revoked_at timestamptz,
      revoked_by uuid references core.users(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index invitations_organization_idx on core.invitations (organization_id, created_at desc)`.execute(db)
  await sql`create index invitations_member_idx on core.invitations (member_id) where member_id is not null`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists core.invitations`.execute(db)
  await sql`alter table core.organization_members drop column if exists joined_at`.execute(db)
}
