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
