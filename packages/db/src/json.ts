import { sql, type RawBuilder } from 'kysely'
import type { Json } from './generated.js'

/**
 * A value for a jsonb column. node-postgres sends a JavaScript array as a PostgreSQL array
 * literal (`{…}`), not as JSON, so a document that is or holds an array at the top is sent as
 * its JSON text and cast; PGlite would accept either, PostgreSQL refuses the literal (22P02).
 */
export function jsonb(value: unknown): RawBuilder<Json> {
  return sql<Json>`${JSON.stringify(value)}::jsonb`
}

/**
 * The reader of one jsonb column whose documents only our own code writes, each checked by its
 * route's schema (or built by our code) on the way in: declared once, beside the module that owns
 * the column, it reads them back as the type they were written as. The generated types know a
 * jsonb column only as `Json`; this is the one place that says what a column holds.
 */
export function jsonColumn<T>(): (stored: Json | null) => T {
  return (stored) => stored as unknown as T
}
