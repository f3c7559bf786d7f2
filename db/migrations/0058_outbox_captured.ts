import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // `captured`: taken by the development catcher of `pnpm start`, which sends nothing off the machine.
  await sql`alter table core.outbox drop constraint outbox_status_check`.execute(db)
  await sql`alter table core.outbox add constraint outbox_status_check check (status in ('pending', 'sent', 'delivered', 'held', 'failed', 'captured'))`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  // Going back, what was captured was never sent: it reads as held.
  await sql`update core.outbox set status = 'held' where status = 'captured'`.execute(db)
  await sql`alter table core.outbox drop constraint outbox_status_check`.execute(db)
  await sql`alter table core.outbox add constraint outbox_status_check check (status in ('pending', 'sent', 'delivered', 'held', 'failed'))`.execute(
    db,
  )
}
