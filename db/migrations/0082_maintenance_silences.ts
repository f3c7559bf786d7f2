import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Maintenance quiets monitoring (issue 58; decision 0015, "Maintenance quiets monitoring"): a
  // status page maintenance holds silences of its own over its components' services and checks,
  // kept in step with its window. Deleting the maintenance ends them first, so the reference is
  // only cleared, never cascaded: a silence holding alerts must end through its job.
  await sql`
    alter table divinux.silences
      add column status_maintenance_id uuid references divinux.status_incidents (id) on delete set null`.execute(db)
  await sql`create index silences_status_maintenance_idx on divinux.silences (status_maintenance_id) where status_maintenance_id is not null`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.silences drop column if exists status_maintenance_id`.execute(db)
}
