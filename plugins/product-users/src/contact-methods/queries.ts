import { sql } from 'kysely'
import { jsonb, lockUntilCommit, type Executor } from '@svc/db'

const columns = [
  'id',
  'type',
  'address',
  'label',
  'verifiedAt',
  'codeSentAt',
  'codeExpiresAt',
  'codeAttempts',
  'codeHash',
  'wrongCodes',
  'createdAt',
] as const

export async function listContactMethods(db: Executor, userId: string) {
  return db.selectFrom('divinux.contactMethods').select(columns).where('userId', '=', userId).orderBy('createdAt').orderBy('id').execute()
}

export async function findContactMethod(db: Executor, userId: string, id: string, forUpdate = false) {
  const query = db.selectFrom('divinux.contactMethods').select(columns).where('userId', '=', userId).where('id', '=', id)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type ContactMethodRow = NonNullable<Awaited<ReturnType<typeof findContactMethod>>>

/** Adds a contact method; undefined when the user has it already. */
export async function insertContactMethod(
  db: Executor,
  method: { userId: string; type: string; address: string; label: string | null; pushKeys: object | null; verifiedAt: Date | null },
) {
  return db
    .insertInto('divinux.contactMethods')
    .values({ ...method, pushKeys: method.pushKeys ? jsonb(method.pushKeys) : null })
    .onConflict((oc) => oc.doNothing())
    .returning(columns)
    .executeTakeFirst()
}

export async function setCode(db: Executor, id: string, codeHash: string, expiresAt: Date) {
  await db
    .updateTable('divinux.contactMethods')
    .set({ codeHash, codeExpiresAt: expiresAt, codeAttempts: 0, codeSentAt: sql<Date>`now()` })
    .where('id', '=', id)
    .execute()
}

export async function countWrongCode(db: Executor, id: string, spent: boolean) {
  await db
    .updateTable('divinux.contactMethods')
    .set({
      codeAttempts: sql<number>`code_attempts + 1`,
      wrongCodes: sql<number>`wrong_codes + 1`,
      ...(spent ? { codeHash: null, codeExpiresAt: null } : {}),
    })
    .where('id', '=', id)
    .execute()
}

/**
 * Serializes one person's code sends to phone numbers until the caller's transaction ends, so two
 * requests at once cannot both pass the caps.
 */
export async function lockPhoneCodes(db: Executor, userId: string): Promise<void> {
  await lockUntilCommit(db, `phone-codes:${userId}`)
}

/** How many codes went to this person's phone numbers in the last hour and ever, and when the hour's first went. */
export async function phoneCodesSent(db: Executor, userId: string) {
  return db
    .selectFrom('divinux.phoneCodeSends')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      sql<number>`count(*) filter (where sent_at > now() - interval '1 hour')::int`.as('lastHour'),
      sql<Date | null>`min(sent_at) filter (where sent_at > now() - interval '1 hour')`.as('firstInHour'),
    ])
    .where('userId', '=', userId)
    .executeTakeFirstOrThrow()
}

export async function recordPhoneCodeSend(db: Executor, userId: string, channel: string): Promise<void> {
  await db.insertInto('divinux.phoneCodeSends').values({ userId, channel }).execute()
}

export async function markVerified(db: Executor, id: string) {
  return db
    .updateTable('divinux.contactMethods')
    .set({ verifiedAt: sql<Date>`now()`, codeHash: null, codeExpiresAt: null, codeAttempts: 0 })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirstOrThrow()
}

export async function deleteContactMethod(db: Executor, userId: string, id: string) {
  return db.deleteFrom('divinux.contactMethods').where('userId', '=', userId).where('id', '=', id).returning('id').executeTakeFirst()
}

/**
 * Removes the push subscriptions at these endpoints, whoever subscribed them: the push service
 * answered that they are gone (expired, or the browser unsubscribed), so no page can reach them.
 */
export async function removePushSubscriptions(db: Executor, endpoints: string[]): Promise<number> {
  if (endpoints.length === 0) return 0
  const removed = await db
    .deleteFrom('divinux.contactMethods')
    .where('type', '=', 'push')
    .where('address', 'in', endpoints)
    .executeTakeFirst()
  return Number(removed.numDeletedRows)
}
