import { sql } from 'kysely'
import { type Executor, type Json, type Page, paged } from '@svc/db'

const runbookColumns = ['id', 'title', 'body', 'services', 'labels', 'version', 'createdBy', 'updatedBy', 'createdAt', 'updatedAt'] as const

export type RunbookRow = NonNullable<Awaited<ReturnType<typeof findRunbook>>>
export interface RunbookContent {
  title: string
  body: string
  services: string[]
  labels: Record<string, string>
}

export async function findRunbook(db: Executor, organizationId: string, runbookId: string, forUpdate = false) {
  let query = db
    .selectFrom('divinux.runbooks')
    .select(runbookColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', runbookId)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

export async function listRunbooks(db: Executor, organizationId: string, filter: { service?: string }, page: Page) {
  let query = db.selectFrom('divinux.runbooks').where('organizationId', '=', organizationId)
  if (filter.service) query = query.where('services', '@>', sql<string[]>`array[${filter.service}]::text[]`)
  return paged(query, (rows) => rows.select(runbookColumns).orderBy('updatedAt', 'desc').orderBy('id'), page)
}

/** Runbooks tagged with any of these services, or with labels at all (their labels are matched by the caller); at most 200. */
export async function runbooksFor(db: Executor, organizationId: string, services: string[]) {
  return db
    .selectFrom('divinux.runbooks')
    .select(runbookColumns)
    .where('organizationId', '=', organizationId)
    .where((eb) => eb.or([eb('services', '&&', sql<string[]>`${services}::text[]`), eb(sql`labels`, '<>', sql`'{}'::jsonb`)]))
    .orderBy('updatedAt', 'desc')
    .limit(200)
    .execute()
}

/** A new runbook and its first version. */
export async function insertRunbook(trx: Executor, organizationId: string, content: RunbookContent, userId: string) {
  const row = await trx
    .insertInto('divinux.runbooks')
    .values({ organizationId, ...content, labels: content.labels as Json, createdBy: userId, updatedBy: userId })
    .returning(runbookColumns)
    .executeTakeFirstOrThrow()
  await insertVersion(trx, organizationId, row.id, 1, content, userId)
  return row
}

/** The runbook's next version: the row holds it, and runbook_versions keeps every one. */
export async function updateRunbook(trx: Executor, organizationId: string, runbookId: string, content: RunbookContent, userId: string) {
  const row = await trx
    .updateTable('divinux.runbooks')
    .set({ ...content, labels: content.labels as Json, version: sql<number>`version + 1`, updatedBy: userId, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', runbookId)
    .returning(runbookColumns)
    .executeTakeFirstOrThrow()
  await insertVersion(trx, organizationId, runbookId, row.version, content, userId)
  return row
}

async function insertVersion(
  trx: Executor,
  organizationId: string,
  runbookId: string,
  version: number,
  content: RunbookContent,
  userId: string,
) {
  await trx
    .insertInto('divinux.runbookVersions')
    .values({ runbookId, organizationId, version, ...content, labels: content.labels as Json, createdBy: userId })
    .execute()
}

export async function deleteRunbook(trx: Executor, organizationId: string, runbookId: string) {
  await trx.deleteFrom('divinux.runbooks').where('organizationId', '=', organizationId).where('id', '=', runbookId).execute()
}

export async function runbookVersions(db: Executor, organizationId: string, runbookId: string) {
  return db
    .selectFrom('divinux.runbookVersions')
    .select(['version', 'title', 'body', 'services', 'labels', 'createdBy', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .where('runbookId', '=', runbookId)
    .orderBy('version', 'desc')
    .execute()
}
