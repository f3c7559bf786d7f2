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
 * identified by `sub`: a known subject is its row, whatever address it now presents. The
 * address is written, and a pending account (a member added, invited or provisioned by e-mail
 * before their first sign-in, a row with no subject yet) is claimed, only when the token says
 * `email_verified: true`; otherwise the subject signs in to an account of its own and claims
 * nothing.
 */
export async function upsertAccountBySubject(db: Kysely<DB>, signIn: SignIn): Promise<Account> {
  const { subject, email, emailVerified, profile } = signIn
  return db.transaction().execute(async (trx) => {
    const seenNow = { ...profile, lastSeenAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` }
    const known = await trx
      .updateTable('core.users')
      .set(emailVerified ? { ...seenNow, email } : seenNow)
      .where('idpSubject', '=', subject)
      .returning(accountColumns)
      .executeTakeFirst()
    if (known) return toAccount(known)

    const invited = emailVerified
      ? await trx
          .updateTable('core.users')
          .set({ ...seenNow, email, idpSubject: subject })
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
      .values({ ...profile, idpSubject: subject, email, lastSeenAt: sql<Date>`now()` })
      .onConflict((oc) => oc.column('idpSubject').doUpdateSet(seenNow))
      .returning(accountColumns)
      .executeTakeFirstOrThrow()
    return toAccount(created)
  })
}

export async function findAccountById(db: Executor, userId: string): Promise<Account | undefined> {
  const row = await db.selectFrom('core.users').select(accountColumns).where('id', '=', userId).executeTakeFirst()
  return row && toAccount(row)
}
