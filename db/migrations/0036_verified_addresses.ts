import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Whether the identity provider said this account's address is verified; only such an address
  // links a member added, invited or provisioned by e-mail to the account (decision 0012). No
  // earlier sign-in recorded it, so every account starts unverified: its next verified sign-in
  // sets it and claims what was added for the address meanwhile.
  await sql`alter table core.users add column email_verified boolean not null default false`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table core.users drop column email_verified`.execute(db)
}
