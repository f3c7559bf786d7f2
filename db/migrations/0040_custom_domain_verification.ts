import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A custom domain is served only once its owner proved control with a DNS TXT record holding
  // the token issued with the claim (decision 0015, "Custom domains").
  await sql`alter table divinux.status_pages
    add column custom_domain_token text,
    add column custom_domain_claimed_at timestamptz,
    add column custom_domain_verified_at timestamptz,
    add column custom_domain_checked_at timestamptz,
    add column custom_domain_failing_since timestamptz`.execute(db)
  // Domains claimed before this rule were never proven: each gets its token and must be verified.
  await sql`update divinux.status_pages
    set custom_domain_token = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), custom_domain_claimed_at = now()
    where custom_domain is not null`.execute(db)
  // Only a verified domain is unique: an unverified claim blocks nobody.
  await sql`drop index divinux.status_pages_custom_domain_idx`.execute(db)
  await sql`create unique index status_pages_verified_domain_idx on divinux.status_pages (custom_domain)
    where custom_domain_verified_at is not null`.execute(db)
  await sql`create index status_pages_claimed_domain_idx on divinux.status_pages (custom_domain) where custom_domain is not null`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index divinux.status_pages_claimed_domain_idx`.execute(db)
  await sql`drop index divinux.status_pages_verified_domain_idx`.execute(db)
  await sql`update divinux.status_pages set custom_domain = null where custom_domain_verified_at is null`.execute(db)
  await sql`create unique index status_pages_custom_domain_idx on divinux.status_pages (custom_domain) where custom_domain is not null`.execute(
    db,
  )
  await sql`alter table divinux.status_pages
    drop column custom_domain_token, drop column custom_domain_claimed_at, drop column custom_domain_verified_at,
    drop column custom_domain_checked_at, drop column custom_domain_failing_since`.execute(db)
}
