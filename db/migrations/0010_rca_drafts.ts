import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The AI draft of an RCA is a job: its state, last error, and who asked.
  await db.schema
    .withSchema('divinux')
    .alterTable('rcas')
    .addColumn('draft_status', 'text', (col) => col.check(sql`draft_status in ('queued', 'running', 'completed', 'failed')`))
    .addColumn('draft_error', 'text')
    .addColumn('draft_overwrite', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('draft_requested_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('draft_requested_at', 'timestamptz')
    .addColumn('draft_prompt_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('draft_completion_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('suspected_deploy_id', 'uuid', (col) => col.references('divinux.deploy_events.id').onDelete('set null'))
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('divinux')
    .alterTable('rcas')
    .dropColumn('draft_status')
    .dropColumn('draft_error')
    .dropColumn('draft_overwrite')
    .dropColumn('draft_requested_by')
    .dropColumn('draft_requested_at')
    .dropColumn('draft_prompt_tokens')
    .dropColumn('draft_completion_tokens')
    .dropColumn('suspected_deploy_id')
    .execute()
}
