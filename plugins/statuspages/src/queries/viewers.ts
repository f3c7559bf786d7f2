import { sql } from 'kysely'
import type { Executor } from '@svc/db'

/** Records a sign-in link to a private page; only the token's hash is kept. Expired links of the page go. */
export async function insertAccessLink(
  db: Executor,
  link: { pageId: string; organizationId: string; email: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db
    .deleteFrom('divinux.statusPageAccessLinks')
    .where('pageId', '=', link.pageId)
    .where('expiresAt', '<', sql<Date>`now()`)
    .execute()
  await db.insertInto('divinux.statusPageAccessLinks').values(link).execute()
}

/** How many sign-in links this address was sent for the page since `since`. */
export async function accessLinksSentSince(db: Executor, pageId: string, email: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('divinux.statusPageAccessLinks')
    .select((eb) => eb.fn.countAll<string>().as('sent'))
    .where('pageId', '=', pageId)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('createdAt', '>=', since)
    .executeTakeFirstOrThrow()
  return Number(row.sent)
}

/** The unused, unexpired link of the page with this token hash, if any (it is not used up by reading). */
export async function pendingAccessLink(db: Executor, pageId: string, tokenHash: string) {
  return db
    .selectFrom('divinux.statusPageAccessLinks')
    .select(['id', 'email'])
    .where('pageId', '=', pageId)
    .where('tokenHash', '=', tokenHash)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', sql<Date>`now()`)
    .executeTakeFirst()
}

/** Uses the link up, once: answers its address, or undefined for a link unknown, used or expired. */
export async function useAccessLink(db: Executor, pageId: string, tokenHash: string) {
  return db
    .updateTable('divinux.statusPageAccessLinks')
    .set({ usedAt: sql<Date>`now()` })
    .where('pageId', '=', pageId)
    .where('tokenHash', '=', tokenHash)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', sql<Date>`now()`)
    .returning(['email', 'organizationId'])
    .executeTakeFirst()
}

/** Starts a reader's session on a private page; expired sessions of the page go. */
export async function insertViewerSession(
  db: Executor,
  session: { pageId: string; organizationId: string; email: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db
    .deleteFrom('divinux.statusPageViewerSessions')
    .where('pageId', '=', session.pageId)
    .where('expiresAt', '<', sql<Date>`now()`)
    .execute()
  await db.insertInto('divinux.statusPageViewerSessions').values(session).execute()
}

/** The unexpired session of the page with this token hash: who signed in. */
export async function viewerSession(db: Executor, pageId: string, tokenHash: string) {
  return db
    .selectFrom('divinux.statusPageViewerSessions')
    .select(['email', 'expiresAt'])
    .where('pageId', '=', pageId)
    .where('tokenHash', '=', tokenHash)
    .where('expiresAt', '>', sql<Date>`now()`)
    .executeTakeFirst()
}

export async function deleteViewerSession(db: Executor, pageId: string, tokenHash: string): Promise<void> {
  await db.deleteFrom('divinux.statusPageViewerSessions').where('pageId', '=', pageId).where('tokenHash', '=', tokenHash).execute()
}

/**
 * A page made public again, or its domains or its audiences' changed: sessions of addresses no
 * longer allowed end. Allowed: a private page's own domains and its audiences' (private/readers.ts `signInDomains`).
 */
export async function endViewerSessionsOutside(db: Executor, pageId: string): Promise<void> {
  // An array expression, not a subquery: `<> all (select …)` would compare with each row's whole array.
  const allowed = sql<
    string[]
  >`coalesce((select viewer_email_domains from divinux.status_pages where id = ${pageId} and visibility = 'private'), '{}')
    || coalesce((select array_agg(d) from divinux.status_audiences a, unnest(a.email_domains) d where a.page_id = ${pageId}), '{}')`
  await db
    .deleteFrom('divinux.statusPageViewerSessions')
    .where('pageId', '=', pageId)
    .where(sql<boolean>`lower(substring(email from '@([^@]+)$')) <> all(${allowed})`)
    .execute()
}
