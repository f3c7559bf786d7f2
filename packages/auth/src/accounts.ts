import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { DB, Executor } from '@svc/db'
import type { Account, PlatformRole, ProfileClaims } from './identity.js'

const accountColumns = ['id', 'email', 'displayName', 'name', 'givenName', 'familyName', 'timeZone', 'isEmployee', 'platformRole'] as const

function toAccount(row: Omit<Account, 'platformRole'> & { platformRole: string | null }): Account {
  return { ...row, platformRole: row.platformRole as PlatformRole | null }
}

/** What a verified ID token says of its subject. */
export interface SignIn {
  subject: string
  email: string
  /** The token's `email_verified` is `true`: only then does the address claim or change anything. */
  emailVerified: boolean
  /** The profile claims; one the token does not carry leaves the stored value alone. */
  profile: ProfileClaims
}

/**
 * The `core.users` row of a signed-in subject (decision 0012, "Accounts"). Accounts are
 * identified by `sub`: a known subject is its row, whatever address it now presents. An address
 * counts for linking only once the identity provider said it was verified: it is written with
 * `email_verified`, and only then does it claim anything. A pending account (a member added,
 * invited or provisioned by e-mail before their first sign-in, a row with no subject yet) is
 * claimed by the first verified sign-in with its address: a new subject becomes that row; a
 * known subject (one that first signed in unverified) takes over its memberships. An
 * unverified sign-in gets an account of its own, its address kept but never matched.
 */
export async function upsertAccountBySubject(db: Kysely<DB>, signIn: SignIn): Promise<Account> {
  const { subject, email, emailVerified, profile } = signIn
  return db.transaction().execute(async (trx) => {
    const seenNow = { ...profile, lastSeenAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` }
    const known = await trx
      .updateTable('core.users')
      .set(emailVerified ? { ...seenNow, email, emailVerified: true } : seenNow)
      .where('idpSubject', '=', subject)
      .returning(accountColumns)
      .executeTakeFirst()
    if (known) {
      if (emailVerified) await claimPendingMemberships(trx, known.id, email)
      return toAccount(known)
    }

    const invited = emailVerified
      ? await trx
          .updateTable('core.users')
          .set({ ...seenNow, email, emailVerified: true, idpSubject: subject })
          .where('id', '=', (eb) =>
            eb
              .selectFrom('core.users')
              .select('id')
              .where('idpSubject', 'is', null)
              .where(sql`lower(email)`, '=', email.toLowerCase())
              .orderBy('createdAt')
              .limit(1),
          )
          .returning(accountColumns)
          .executeTakeFirst()
      : undefined
    if (invited) return toAccount(invited)

    const created = await trx
      .insertInto('core.users')
      .values({ ...profile, idpSubject: subject, email, emailVerified, lastSeenAt: sql<Date>`now()` })
      .onConflict((oc) => oc.column('idpSubject').doUpdateSet(seenNow))
      .returning(accountColumns)
      .executeTakeFirstOrThrow()
    return toAccount(created)
  })
}

/**
 * The memberships waiting for this address on pending accounts move to a known account whose
 * address the identity provider has now verified (one per organization; where the account is
 * already a member, the pending membership stays where it is).
 */
async function claimPendingMemberships(trx: Executor, accountId: string, email: string): Promise<void> {
  await sql`
    update core.organization_members m set user_id = ${accountId}, updated_at = now()
    where m.id in (
      select distinct on (pending.organization_id) pending.id
      from core.organization_members pending join core.users p on p.id = pending.user_id
      where p.idp_subject is null and lower(p.email) = ${email.toLowerCase()}
        and not exists (
          select 1 from core.organization_members held
          where held.organization_id = pending.organization_id and held.user_id = ${accountId})
      order by pending.organization_id, pending.created_at)`.execute(trx)
}

export async function findAccountById(db: Executor, userId: string): Promise<Account | undefined> {
  const row = await db.selectFrom('core.users').select(accountColumns).where('id', '=', userId).executeTakeFirst()
  return row && toAccount(row)
}
