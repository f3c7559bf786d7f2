import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The roles an incident type's incidents have, each with its own checklist if given (issue 56;
  // decision 0031, "Roles per type"): [{role, tasks?}]. Empty: every role, the organization's checklists.
  await sql`alter table divinux.incident_types add column roles jsonb not null default '[]'::jsonb`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.incident_types drop column if exists roles`.execute(db)
}
