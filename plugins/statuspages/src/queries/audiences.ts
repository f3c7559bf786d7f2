import { sql } from 'kysely'
import type { Executor } from '@svc/db'

const audienceColumns = ['id', 'pageId', 'name', 'emailDomains', 'createdAt', 'updatedAt'] as const

/** A page's audiences, by name. */
export async function listAudiences(db: Executor, organizationId: string, pageId: string) {
  return db
    .selectFrom('divinux.statusAudiences')
    .select(audienceColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .orderBy('name')
    .orderBy('id')
    .execute()
}

export type AudienceRow = Awaited<ReturnType<typeof listAudiences>>[number]

export async function findAudience(db: Executor, organizationId: string, pageId: string, id: string) {
  return db
    .selectFrom('divinux.statusAudiences')
    .select(audienceColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Of `ids`, those that are audiences of the page (of its organization, in the query itself). */
export async function audiencesOfPage(db: Executor, organizationId: string, pageId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('divinux.statusAudiences')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('id', 'in', ids)
    .execute()
  return rows.map((row) => row.id)
}

export async function insertAudience(
  db: Executor,
  audience: { organizationId: string; pageId: string; name: string; emailDomains: string[]; linkTokenHash: string },
) {
  return db.insertInto('divinux.statusAudiences').values(audience).returning(audienceColumns).executeTakeFirstOrThrow()
}

export async function updateAudience(db: Executor, id: string, fields: { name?: string; emailDomains?: string[]; linkTokenHash?: string }) {
  return db
    .updateTable('divinux.statusAudiences')
    .set({ ...fields, updatedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .returning(audienceColumns)
    .executeTakeFirstOrThrow()
}

/** How many components and incidents (maintenances included) are tagged for the audience. */
export async function audienceTags(db: Executor, pageId: string, id: string) {
  const tagged = (table: 'divinux.statusComponents' | 'divinux.statusIncidents') =>
    db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('pageId', '=', pageId)
      .where(sql<boolean>`audience_ids @> array[${id}]::uuid[]`)
      .executeTakeFirstOrThrow()
  const [components, incidents] = await Promise.all([tagged('divinux.statusComponents'), tagged('divinux.statusIncidents')])
  return { components: Number(components.n), incidents: Number(incidents.n) }
}

/** Removes an audience; its subscribers keep their subscriptions, told from then on what everyone is told. */
export async function deleteAudience(db: Executor, pageId: string, id: string): Promise<void> {
  await db
    .updateTable('divinux.statusSubscribers')
    .set({ audienceIds: sql<string[]>`array_remove(audience_ids, ${id}::uuid)` })
    .where('pageId', '=', pageId)
    .where(sql<boolean>`audience_ids @> array[${id}]::uuid[]`)
    .execute()
  await db.deleteFrom('divinux.statusAudiences').where('pageId', '=', pageId).where('id', '=', id).execute()
}

/**
 * Whether a row tagged for `tagged` audiences is seen by a reader of `reader` audiences, in SQL:
 * untagged rows by everyone, tagged ones by readers of one of their audiences.
 */
export const seenBy = (reader: readonly string[], column = 'audience_ids') =>
  sql<boolean>`(cardinality(${sql.ref(column)}) = 0 or ${sql.ref(column)} && ${sql.val([...reader])}::uuid[])`

/** `seenBy`, for rows already read. */
export const isSeenBy = (reader: readonly string[], tagged: readonly string[]) =>
  tagged.length === 0 || tagged.some((id) => reader.includes(id))
