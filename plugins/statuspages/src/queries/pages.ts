import { sql } from 'kysely'
import type { Executor, Page } from '@svc/db'
import { paged } from '@svc/db'

const pageColumns = [
  'id',
  'organizationId',
  'name',
  'slug',
  'timeZone',
  'customDomain',
  'published',
  'allowSubscribers',
  'supportUrl',
  'revision',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

export interface PageFields {
  name: string
  slug: string
  timeZone: string
  customDomain: string | null
  published: boolean
  allowSubscribers: boolean
  supportUrl: string | null
}

export async function listPages(db: Executor, organizationId: string, page: Page) {
  return paged(
    db.selectFrom('divinux.statusPages').where('organizationId', '=', organizationId),
    (rows) => rows.select(pageColumns).orderBy('createdAt').orderBy('id'),
    page,
  )
}

export async function findPage(db: Executor, organizationId: string, pageId: string, forUpdate = false) {
  let query = db.selectFrom('divinux.statusPages').select(pageColumns).where('organizationId', '=', organizationId).where('id', '=', pageId)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

export type PageRow = NonNullable<Awaited<ReturnType<typeof findPage>>>

export async function insertPage(db: Executor, organizationId: string, fields: PageFields, createdBy: string) {
  return db
    .insertInto('divinux.statusPages')
    .values({ organizationId, ...fields, createdBy })
    .returning(pageColumns)
    .executeTakeFirstOrThrow()
}

export async function updatePage(db: Executor, organizationId: string, pageId: string, fields: Partial<PageFields>) {
  return db
    .updateTable('divinux.statusPages')
    .set({ ...fields, revision: sql<number>`revision + 1`, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', pageId)
    .returning(pageColumns)
    .executeTakeFirstOrThrow()
}

export async function deletePage(db: Executor, organizationId: string, pageId: string): Promise<void> {
  await db.deleteFrom('divinux.statusPages').where('organizationId', '=', organizationId).where('id', '=', pageId).execute()
}

/** Which of a slug and a custom domain another page has taken already. */
export async function takenBy(db: Executor, fields: { slug?: string; customDomain?: string | null }, exceptPageId?: string) {
  const rows = await db
    .selectFrom('divinux.statusPages')
    .select(['slug', 'customDomain'])
    .where((eb) =>
      eb.or([
        ...(fields.slug ? [eb('slug', '=', fields.slug)] : []),
        ...(fields.customDomain ? [eb('customDomain', '=', fields.customDomain)] : []),
      ]),
    )
    .$if(exceptPageId !== undefined, (query) => query.where('id', '<>', exceptPageId ?? ''))
    .execute()
  return {
    slug: rows.some((row) => fields.slug !== undefined && row.slug === fields.slug),
    customDomain: rows.some((row) => fields.customDomain != null && row.customDomain === fields.customDomain),
  }
}

/**
 * Anything a public document shows changed: the page's revision grows, so every replica's cached
 * documents of it are stale (see public/cache.ts).
 */
export async function touchPage(db: Executor, pageId: string): Promise<void> {
  await db
    .updateTable('divinux.statusPages')
    .set({ revision: sql<number>`revision + 1`, updatedAt: sql<Date>`now()` })
    .where('id', '=', pageId)
    .execute()
}

/** The published page with this slug or custom domain, as the public documents read it. */
export async function publishedPageBy(db: Executor, by: 'slug' | 'customDomain', value: string) {
  return db
    .selectFrom('divinux.statusPages')
    .select(['id', 'organizationId', 'name', 'slug', 'timeZone', 'customDomain', 'allowSubscribers', 'supportUrl', 'revision', 'updatedAt'])
    .where(by, '=', value)
    .where('published', '=', true)
    .executeTakeFirst()
}
