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
  { table: 'core.organizations', scope: 'access', announce: 'core.announce_organization_change' },
  { table: 'core.organization_members', scope: 'access', announce: 'core.announce_change' },
  { table: 'core.org_product_roles', scope: 'access', announce: 'core.announce_change' },
  { table: 'core.scim_groups', scope: 'access', announce: 'core.announce_change' },
  { table: 'core.scim_group_members', scope: 'access', announce: 'core.announce_change' },
  { table: 'divinux.alerts', scope: 'alerts', announce: 'core.announce_change' },
] as const

/** Each announcing function and the column that names a row's organization. */
const ANNOUNCING_FUNCTIONS = [
  ['core.announce_change', 'organization_id'],
  ['core.announce_organization_change', 'id'],
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
  // notice, and pg_notify folds identical notices of one transaction into one. The queries are
  // static (planned once per session); the organizations table names its organization `id`, so it
  // has a function of its own. A TRUNCATE names no rows, so it announces every organization ('*').
  for (const [name, organizationColumn] of ANNOUNCING_FUNCTIONS) {
    await sql`
      create function ${sql.raw(name)}() returns trigger language plpgsql as $$
      begin
        perform pg_notify('svc_changes', tg_argv[0] || ':' || touched.${sql.raw(organizationColumn)} || ':' || pg_current_xact_id())
        from (select distinct ${sql.raw(organizationColumn)} from changed_rows) as touched;
        return null;
      end $$`.execute(db)
  }
  await sql`
    create function core.announce_truncate() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_changes', tg_argv[0] || ':*:' || pg_current_xact_id());
      return null;
    end $$`.execute(db)
  for (const { table, scope, announce } of ANNOUNCED) {
    for (const { event, transition } of EVENTS) {
      await sql`
        create trigger ${sql.raw(triggerName(table, event))} after ${sql.raw(event)} on ${sql.raw(table)}
        ${sql.raw(transition)} for each statement execute function ${sql.raw(announce)}(${sql.lit(scope)})`.execute(db)
    }
    await sql`
      create trigger ${sql.raw(triggerName(table, 'truncate'))} after truncate on ${sql.raw(table)}
      for each statement execute function core.announce_truncate(${sql.lit(scope)})`.execute(db)
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const { table } of ANNOUNCED) {
    for (const event of ['insert', 'update', 'delete', 'truncate']) {
      await sql`drop trigger ${sql.raw(triggerName(table, event))} on ${sql.raw(table)}`.execute(db)
    }
  }
  for (const name of [...ANNOUNCING_FUNCTIONS.map(([name]) => name), 'core.announce_truncate']) {
    await sql`drop function ${sql.raw(name)}()`.execute(db)
  }
}
