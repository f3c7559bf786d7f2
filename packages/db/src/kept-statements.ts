import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import pg from 'pg'

const MARK = '/* kept prepared */ '

/**
 * Put first in a hot statement built with `sql` (sql`${keptPrepared} select …`): on PostgreSQL
 * each connection prepares it once, under a name drawn from its text, inside a transaction or not
 * (decision 0034). Kysely's driver sends every statement unnamed, so PostgreSQL plans it at every
 * run: for the statements of a check run or a batch of alerts, planning costs as much as
 * executing. Only for statements whose text takes a few shapes: each shape is kept on every
 * connection, so a text that writes a list of values into itself (`sql.join`) would keep one per
 * length; pass such lists as one array parameter instead. On PGlite the mark is a comment, and
 * its pool keeps every statement parsed anyway.
 */
export const keptPrepared = sql.raw(MARK)

const names = new Map<string, string>()

/**
 * The name a statement is prepared under, drawn from its text: the same text, the same name, on
 * every connection and in every process (`keptPrepared`, `Database.prepared`).
 */
export function preparedName(text: string): string {
  let name = names.get(text)
  if (name === undefined) {
    name = `kept_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`
    names.set(text, name)
  }
  return name
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown
const plainQuery = pg.Client.prototype.query as unknown as Query

/**
 * pg's client, running a statement marked `keptPrepared` as a named prepared statement. Kysely's
 * driver calls `query(text, values)`, so that form is the one looked at; pg keeps the names a
 * connection has prepared and parses each once there.
 */
export class KeptStatementsClient extends pg.Client {}

const keptQuery: Query = function (this: pg.Client, ...args) {
  const [text, values] = args
  if (args.length <= 2 && typeof text === 'string' && text.startsWith(MARK))
    return plainQuery.call(this, { name: preparedName(text), text, values })
  return plainQuery.apply(this, args)
}
KeptStatementsClient.prototype.query = keptQuery as unknown as pg.Client['query']
