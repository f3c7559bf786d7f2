import { sql } from 'kysely'
import { jsonColumn, jsonb, type Executor, type Json } from '@svc/db'
import type { ComponentStatus, IncidentImpact, IncidentStatus } from '../model.js'

/** A template's words in one language. */
export interface TemplateText {
  title: string
  body: string
}

/** What a template says in each language it is written in, by language tag. */
export type TemplateTexts = Record<string, TemplateText>
export type TemplateComponent = { componentId: string; status: ComponentStatus }

// Both written only from a validated request body (templates/routes.ts).
const textsOf = jsonColumn<TemplateTexts>()
const componentsOf = jsonColumn<TemplateComponent[]>()

const templateColumns = ['id', 'pageId', 'key', 'status', 'impact', 'componentStatuses', 'texts', 'createdAt', 'updatedAt'] as const

export interface TemplateFields {
  key: string
  status: IncidentStatus
  impact: IncidentImpact
  components: TemplateComponent[]
  texts: TemplateTexts
}

export interface TemplateRow extends TemplateFields {
  id: string
  pageId: string
  createdAt: Date
  updatedAt: Date
}

interface StoredTemplate {
  id: string
  pageId: string
  key: string
  status: string
  impact: string
  componentStatuses: Json
  texts: Json
  createdAt: Date
  updatedAt: Date
}

function templateOf(row: StoredTemplate): TemplateRow {
  return {
    id: row.id,
    pageId: row.pageId,
    key: row.key,
    status: row.status as IncidentStatus,
    impact: row.impact as IncidentImpact,
    components: componentsOf(row.componentStatuses),
    texts: textsOf(row.texts),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

/** A page's incident templates, by key. */
export async function listTemplates(db: Executor, organizationId: string, pageId: string): Promise<TemplateRow[]> {
  const rows = await db
    .selectFrom('divinux.statusIncidentTemplates')
    .select(templateColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .orderBy('key')
    .execute()
  return rows.map(templateOf)
}

export async function findTemplate(db: Executor, organizationId: string, pageId: string, id: string): Promise<TemplateRow | undefined> {
  const row = await db
    .selectFrom('divinux.statusIncidentTemplates')
    .select(templateColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('id', '=', id)
    .executeTakeFirst()
  return row && templateOf(row)
}

/** The page's template with this key, if any. */
export async function templateByKey(db: Executor, pageId: string, key: string): Promise<TemplateRow | undefined> {
  const row = await db
    .selectFrom('divinux.statusIncidentTemplates')
    .select(templateColumns)
    .where('pageId', '=', pageId)
    .where('key', '=', key)
    .executeTakeFirst()
  return row && templateOf(row)
}

/** The organization's templates naming one of these components, with their page's languages (for the comms agent). */
export async function templatesForComponents(db: Executor, organizationId: string, componentIds: readonly string[]) {
  if (componentIds.length === 0) return []
  const rows = await db
    .selectFrom('divinux.statusIncidentTemplates as t')
    .innerJoin('divinux.statusPages as p', 'p.id', 't.pageId')
    .select([
      't.id',
      't.pageId',
      't.key',
      't.status',
      't.impact',
      't.componentStatuses',
      't.texts',
      't.createdAt',
      't.updatedAt',
      'p.locales',
    ])
    .where('t.organizationId', '=', organizationId)
    .where(
      sql<boolean>`exists (select 1 from jsonb_array_elements(t.component_statuses) c where c->>'componentId' = any(${sql.val([...componentIds])}::text[]))`,
    )
    .orderBy('t.key')
    .execute()
  return rows.map((row) => ({ ...templateOf(row), locales: row.locales }))
}

export async function insertTemplate(db: Executor, organizationId: string, pageId: string, fields: TemplateFields): Promise<TemplateRow> {
  const row = await db
    .insertInto('divinux.statusIncidentTemplates')
    .values({
      organizationId,
      pageId,
      key: fields.key,
      status: fields.status,
      impact: fields.impact,
      componentStatuses: jsonb(fields.components),
      texts: jsonb(fields.texts),
    })
    .returning(templateColumns)
    .executeTakeFirstOrThrow()
  return templateOf(row)
}

export async function updateTemplate(db: Executor, id: string, fields: Partial<TemplateFields>): Promise<TemplateRow> {
  const { components, texts, ...rest } = fields
  const row = await db
    .updateTable('divinux.statusIncidentTemplates')
    .set({
      ...rest,
      ...(components !== undefined ? { componentStatuses: jsonb(components) } : {}),
      ...(texts !== undefined ? { texts: jsonb(texts) } : {}),
      updatedAt: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .returning(templateColumns)
    .executeTakeFirstOrThrow()
  return templateOf(row)
}

export async function deleteTemplate(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('divinux.statusIncidentTemplates').where('id', '=', id).execute()
}
