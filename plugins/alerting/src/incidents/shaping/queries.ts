import { sql } from 'kysely'
import { jsonb, jsonColumn, paged, type Executor, type Page } from '@svc/db'
import type { FieldKind, Requirement, TypeField, TypeRole } from './schemas.js'

// The custom field and incident type tables are the alerting surface's; every query is scoped by
// organization in its own WHERE.

const fieldColumns = ['id', 'key', 'name', 'description', 'kind', 'options', 'required', 'createdAt', 'updatedAt'] as const
const typeColumns = ['id', 'key', 'name', 'description', 'fields', 'roles', 'createdAt', 'updatedAt'] as const

/** A type's stored field list and roles, as the validated body wrote them. */
export const storedTypeFields = jsonColumn<TypeField[]>()
export const storedTypeRoles = jsonColumn<TypeRole[]>()

export interface FieldDefinition {
  id: string
  key: string
  name: string
  description: string | null
  kind: FieldKind
  options: string[]
  required: Requirement
  createdAt: Date
  updatedAt: Date
}

const fieldsOf = (db: Executor, organizationId: string) =>
  db.selectFrom('divinux.incidentFields').where('organizationId', '=', organizationId).select(fieldColumns)
// The table's check constraints hold kind and required to the schemas' lists.
const asDefinition = (row: { kind: string; required: string } & Omit<FieldDefinition, 'kind' | 'required'>) => row as FieldDefinition

export async function listFields(db: Executor, organizationId: string, page: Page) {
  const { rows, total } = await paged(
    db.selectFrom('divinux.incidentFields').where('organizationId', '=', organizationId),
    (query) => query.select(fieldColumns).orderBy('key'),
    page,
  )
  return { rows: rows.map(asDefinition), total }
}

/** Every field of the organization, by key. */
export async function fieldsByKey(db: Executor, organizationId: string): Promise<Map<string, FieldDefinition>> {
  const rows = await fieldsOf(db, organizationId).execute()
  return new Map(rows.map((row) => [row.key, asDefinition(row)]))
}

/** The keys of the organization's custom fields. */
export async function fieldKeysOf(db: Executor, organizationId: string): Promise<string[]> {
  return (await fieldsOf(db, organizationId).execute()).map((row) => row.key)
}

/** The keys of the organization's service fields: their values name catalog services. */
export async function serviceFieldKeys(db: Executor, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('divinux.incidentFields')
    .select('key')
    .where('organizationId', '=', organizationId)
    .where('kind', '=', 'service')
    .execute()
  return rows.map((row) => row.key)
}

export async function findField(db: Executor, organizationId: string, fieldId: string, forUpdate = false) {
  const query = fieldsOf(db, organizationId).where('id', '=', fieldId)
  const row = await (forUpdate ? query.forUpdate() : query).executeTakeFirst()
  return row && asDefinition(row)
}

export async function fieldKeyTaken(db: Executor, organizationId: string, key: string) {
  return (await fieldsOf(db, organizationId).where('key', '=', key).executeTakeFirst()) !== undefined
}

export interface FieldValuesOfDefinition {
  key: string
  name: string
  description: string | null
  kind: FieldKind
  options: string[]
  required: Requirement
}

export async function insertField(db: Executor, organizationId: string, field: FieldValuesOfDefinition, createdBy: string) {
  return asDefinition(
    await db
      .insertInto('divinux.incidentFields')
      .values({ ...field, organizationId, createdBy })
      .returning(fieldColumns)
      .executeTakeFirstOrThrow(),
  )
}

export async function updateField(db: Executor, organizationId: string, fieldId: string, change: Partial<FieldValuesOfDefinition>) {
  return asDefinition(
    await db
      .updateTable('divinux.incidentFields')
      .set({ ...change, updatedAt: sql<Date>`now()` })
      .where('organizationId', '=', organizationId)
      .where('id', '=', fieldId)
      .returning(fieldColumns)
      .executeTakeFirstOrThrow(),
  )
}

/** Removes the field, its values from every incident and its place in every type. */
export async function deleteField(db: Executor, organizationId: string, field: { id: string; key: string }) {
  await db
    .updateTable('divinux.incidents')
    .set({ fields: sql`fields - ${field.key}::text` })
    .where('organizationId', '=', organizationId)
    .where(sql<boolean>`fields ? ${field.key}::text`)
    .execute()
  await db
    .updateTable('divinux.incidentTypes')
    .set({
      fields: sql`coalesce((select jsonb_agg(entry) from jsonb_array_elements(fields) entry where entry->>'field' <> ${field.key}), '[]'::jsonb)`,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where(sql<boolean>`fields @> ${jsonb([{ field: field.key }])}`)
    .execute()
  await db.deleteFrom('divinux.incidentFields').where('organizationId', '=', organizationId).where('id', '=', field.id).execute()
}

const typesOf = (db: Executor, organizationId: string) =>
  db.selectFrom('divinux.incidentTypes').where('organizationId', '=', organizationId).select(typeColumns)

export async function listTypes(db: Executor, organizationId: string, page: Page) {
  return paged(
    db.selectFrom('divinux.incidentTypes').where('organizationId', '=', organizationId),
    (query) => query.select(typeColumns).orderBy('key'),
    page,
  )
}

export async function findType(db: Executor, organizationId: string, typeId: string, forUpdate = false) {
  const query = typesOf(db, organizationId).where('id', '=', typeId)
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst()
}

export type TypeRow = NonNullable<Awaited<ReturnType<typeof findType>>>

export async function findTypeByKey(db: Executor, organizationId: string, key: string) {
  return typesOf(db, organizationId).where('key', '=', key).executeTakeFirst()
}

export interface TypeValues {
  key: string
  name: string
  description: string | null
  fields: TypeField[]
  roles: TypeRole[]
}

export async function insertType(db: Executor, organizationId: string, type: TypeValues, createdBy: string) {
  return db
    .insertInto('divinux.incidentTypes')
    .values({ ...type, fields: jsonb(type.fields), roles: jsonb(type.roles), organizationId, createdBy })
    .returning(typeColumns)
    .executeTakeFirstOrThrow()
}

export async function updateType(db: Executor, organizationId: string, typeId: string, change: Partial<TypeValues>) {
  const { fields, roles, ...rest } = change
  return db
    .updateTable('divinux.incidentTypes')
    .set({ ...rest, ...(fields ? { fields: jsonb(fields) } : {}), ...(roles ? { roles: jsonb(roles) } : {}), updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', typeId)
    .returning(typeColumns)
    .executeTakeFirstOrThrow()
}

/** Removes the type; its incidents keep their field values and have no type. */
export async function deleteType(db: Executor, organizationId: string, typeId: string) {
  await db.deleteFrom('divinux.incidentTypes').where('organizationId', '=', organizationId).where('id', '=', typeId).execute()
}
