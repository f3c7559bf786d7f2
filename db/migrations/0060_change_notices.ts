import { sql, type Kysely } from 'kysely'

/**
 * The tables whose changes the services' caches are kept right by (decision 0029): each
 * statement that writes one announces, on the `svc_changes` channel,
 * `<scope>:<organization id>:<transaction id>` for every organization it touched (the
 * transaction's id tells apart the copies of one notice that a process's several listening
 * connections each receive). `access` is what the access rules read (a membership, its
 * organization, product roles direct and through SCIM groups); `alerts` is the alert list.
 */
const ANNOUNCED = [
  { table: 'core.organizations', scope: 'access', organizationColumn: 'id' },
  { table: 'core.organization_members', scope: 'access', organizationColumn: 'organization_id' },
  { table: 'core.org_product_roles', scope: 'access', organizationColumn: 'organization_id' },
  { table: 'core.scim_groups', scope: 'access', organizationColumn: 'organization_id' },
  { table: 'core.scim_group_members', scope: 'access', organizationColumn: 'organization_id' },
  { table: 'divinux.alerts', scope: 'alerts', organizationColumn: 'organization_id' },
] as const

const EVENTS = [
  { event: 'insert', transition: 'referencing new table as changed_rows' },
  { event: 'update', transition: 'referencing new table as changed_rows' },
  { event: 'delete', transition: 'referencing old table as changed_rows' },
] as const

function triggerName(table: string, event: string): string {
  return `${table.split('.')[1]}_announce_${event}`
}

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Once per statement, not per row: an ingestion batch of 50 alerts of one organization is one
  // notice. pg_notify folds identical notices of one transaction into one. A TRUNCATE names no
  // rows, so it announces every organization ('*'). The organization column is an argument, so
  // the query is dynamic; the transition table is visible to it all the same.
  await sql`
    create function core.announce_change() returns trigger language plpgsql as $$
    declare
      organization_id uuid;
    begin
      if tg_op = 'TRUNCATE' then
        perform pg_notify('svc_changes', tg_argv[0] || ':*:' || pg_current_xact_id());
        return null;
      end if;
      for organization_id in execute format('select distinct %I from changed_rows', tg_argv[1]) loop
        perform pg_notify('svc_changes', tg_argv[0] || ':' || organization_id || ':' || pg_current_xact_id());
      end loop;
      return null;
    end $$`.execute(db)
  for (const { table, scope, organizationColumn } of ANNOUNCED) {
    for (const { event, transition } of EVENTS) {
      await sql`
        create trigger ${sql.raw(triggerName(table, event))} after ${sql.raw(event)} on ${sql.raw(table)}
        ${sql.raw(transition)} for each statement
        execute function core.announce_change(${sql.lit(scope)}, ${sql.lit(organizationColumn)})`.execute(db)
    }
    await sql`
      create trigger ${sql.raw(triggerName(table, 'truncate'))} after truncate on ${sql.raw(table)}
      for each statement execute function core.announce_change(${sql.lit(scope)})`.execute(db)
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const { table } of ANNOUNCED) {
    for (const event of ['insert', 'update', 'delete', 'truncate']) {
      await sql`drop trigger ${sql.raw(triggerName(table, event))} on ${sql.raw(table)}`.execute(db)
    }
  }
  await sql`drop function core.announce_change()`.execute(db)
}
