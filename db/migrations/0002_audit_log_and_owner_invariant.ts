import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // No foreign key to organizations: the history of a deleted organization, its deletion
  // included, outlives it.
  await db.schema
    .withSchema('core')
    .createTable('audit_logs')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid')
    .addColumn('actor_type', 'text', (col) => col.notNull().check(sql`actor_type in ('user', 'scim_token', 'system')`))
    .addColumn('actor_user_id', 'uuid')
    .addColumn('actor_original_user_id', 'uuid')
    .addColumn('actor_token_id', 'uuid')
    .addColumn('product', 'text', (col) =>
      col.notNull().check(sql`product in ('platform', 'statuspages', 'alerting', 'synthetics', 'insights')`),
    )
    .addColumn('entity_type', 'text', (col) => col.notNull())
    .addColumn('entity_id', 'text')
    .addColumn('action', 'text', (col) => col.notNull())
    .addColumn('changes', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('request_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  // A page is "newest first within an organization", optionally narrowed by one of the
  // filters: each index serves one filter and the order at once.
  await sql`create index audit_logs_org_time_idx on core.audit_logs (organization_id, created_at desc, id desc)`.execute(db)
  await sql`create index audit_logs_org_actor_time_idx on core.audit_logs (organization_id, actor_user_id, created_at desc)`.execute(db)
  await sql`create index audit_logs_org_entity_time_idx on core.audit_logs (organization_id, entity_type, created_at desc)`.execute(db)
  await sql`create index audit_logs_org_action_time_idx on core.audit_logs (organization_id, action, created_at desc)`.execute(db)
  await sql`create index audit_logs_org_product_time_idx on core.audit_logs (organization_id, product, created_at desc)`.execute(db)

  // Audit entries are append-only, whatever the code above the database does.
  await sql`
    create function core.audit_logs_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit log entries cannot be changed or deleted' using errcode = 'insufficient_privilege';
    end
    $$`.execute(db)
  await sql`
    create trigger audit_logs_append_only before update or delete on core.audit_logs
    for each row execute function core.audit_logs_append_only()`.execute(db)

  // An organization always keeps an owner. Checked at commit, after taking the
  // organization's row lock, so two transactions demoting the last two owners at once cannot
  // both pass: the second one waits, then sees the first one's change.
  await sql`
    create function core.organization_keeps_an_owner() returns trigger language plpgsql as $$
    begin
      perform 1 from core.organizations where id = old.organization_id for update;
      if not found then
        return null; -- the organization itself is gone
      end if;
      if not exists (
        select 1 from core.organization_members where organization_id = old.organization_id and role = 'owner'
      ) then
        raise exception 'an organization must keep at least one owner' using errcode = 'check_violation';
      end if;
      return null;
    end
    $$`.execute(db)
  await sql`
    create constraint trigger organization_keeps_an_owner
    after update of role or delete on core.organization_members
    deferrable initially deferred
    for each row when (old.role = 'owner')
    execute function core.organization_keeps_an_owner()`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists organization_keeps_an_owner on core.organization_members`.execute(db)
  await sql`drop function if exists core.organization_keeps_an_owner()`.execute(db)
  await sql`drop table if exists core.audit_logs`.execute(db)
  await sql`drop function if exists core.audit_logs_append_only()`.execute(db)
}
