import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { DB, Executor } from '@svc/db'
import type { Account, PlatformRole } from './identity.js'

const accountColumns = ['id', 'email', 'displayName', 'timeZone', 'isEmployee', 'platformRole'] as const

function toAccount(row: Omit<Account, 'platformRole'> & { platformRole: string | null }): Account {
  return { ...row, platformRole: row.platformRole as PlatformRole | null }
}

/**
 * The `core.users` row of a signed-in subject, created on first sight and kept in step
 * with the token's e-mail. A user invited by e-mail before their first sign-in (a row with
 * no subject yet) is claimed by the first subject that signs in with that address.
 */
export async function upsertAccountBySubject(db: Kysely<DB>, subject: string, email: string): Promise<Account> {
  return db.transaction().execute(async (trx) => {
    const seenNow = { email, lastSeenAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` }
    const known = await trx
      .updateTable('core.users')
      .set(seenNow)
      .where('idpSubject', '=', subject)
      .returning(accountColumns)
      .executeTakeFirst()
    if (known) return toAccount(known)

    const invited = await trx
      .updateTable('core.users')
      .set({ ...seenNow, idpSubject: subject })
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
    if (invited) return toAccount(invited)

    const created = await trx
      .insertInto('core.users')
      .values({ idpSubject: subject, email, lastSeenAt: sql<Date>`now()` })
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
