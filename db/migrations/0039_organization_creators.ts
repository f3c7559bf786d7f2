import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Who created an organization: each person may create a limited number (decision 0012,
  // "Organizations and AI spend"). Earlier organizations take it from their creation's audit entry.
  await sql`alter table core.organizations add column created_by uuid references core.users (id) on delete set null`.execute(db)
  await sql`update core.organizations o set created_by = a.actor_user_id
    from core.audit_logs a
    where a.organization_id = o.id and a.action = 'organization.created' and a.actor_user_id is not null
      and exists (select 1 from core.users u where u.id = a.actor_user_id)`.execute(db)
  await sql`create index organizations_created_by_idx on core.organizations (created_by)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table core.organizations drop column created_by`.execute(db)
}
