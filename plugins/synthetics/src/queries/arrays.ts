import { sql, type RawBuilder } from 'kysely'

// Arrays are sent as array constructors: node-postgres and PGlite serialize JavaScript arrays
// differently, an explicit `array[...]::type[]` reads the same on both.

export const textArray = (values: readonly string[]): RawBuilder<string[]> =>
  values.length === 0 ? sql<string[]>`'{}'::text[]` : sql<string[]>`array[${sql.join(values)}]::text[]`

export const uuidArray = (values: readonly string[]): RawBuilder<string[]> =>
  values.length === 0 ? sql<string[]>`'{}'::uuid[]` : sql<string[]>`array[${sql.join(values)}]::uuid[]`
