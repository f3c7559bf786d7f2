// What the benchmarks leave in the database, for the sizing guide (docs/sizing.md): rows and bytes
// per row of each table, heap, indexes and TOAST together, partitions summed into their parent
// (pg_partition_tree answers nothing for a plain table: its own size is taken then).
import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'

export interface Footprint {
  table: string
  rows: number
  bytes: number
}

/** Rows and total bytes (table, indexes, TOAST; every partition) of each schema-qualified table. */
export async function footprintOf(db: Kysely<DB>, tables: readonly string[]): Promise<Footprint[]> {
  const footprints: Footprint[] = []
  for (const table of tables) {
    const { rows } = await sql<{ rows: string; bytes: string }>`
      select (select count(*) from ${sql.raw(table)})::text as rows,
             coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree(${table}::regclass)),
                      pg_total_relation_size(${table}::regclass))::text as bytes`.execute(db)
    footprints.push({ table, rows: Number(rows[0]!.rows), bytes: Number(rows[0]!.bytes) })
  }
  return footprints
}

/** The footprints as a Markdown table. */
export function footprintTable(footprints: readonly Footprint[]): string {
  const lines = ['| table | rows | total MB | bytes per row |', '|---|---:|---:|---:|']
  for (const { table, rows, bytes } of footprints)
    lines.push(`| ${table} | ${rows} | ${(bytes / 1_048_576).toFixed(1)} | ${rows > 0 ? Math.round(bytes / rows) : '–'} |`)
  return lines.join('\n')
}
