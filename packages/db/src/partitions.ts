import { sql, type Kysely } from 'kysely'
import type { DB } from './generated.js'
import { lockUntilCommit } from './lock.js'

/**
 * Native range partitions by UTC month, kept by the service instead of an extension
 * (pg_partman is not in PGlite, and the whole job is two statements): a table created with
 * `partition by range (<time column>)` gets one partition per month, named
 * `<table>_pYYYY_MM`, created ahead of the rows that need them; old months leave as a whole
 * partition (`drop table`), never as a long delete.
 */
export interface PartitionedTable {
  /** Schema-qualified, as `core.analytics_events`. */
  table: `${string}.${string}`
}

const MONTH = /_p(\d{4})_(\d{2})$/

function monthStart(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1))
}

function nextMonth(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1))
}

function schemaOf(table: string): string {
  return table.split('.')[0] ?? 'public'
}

function partitionName(table: string, month: Date): string {
  const name = table.split('.')[1]
  return `${name}_p${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`
}

/** The partitions of `table` with the month each holds, oldest first. */
export async function monthlyPartitions({ table }: PartitionedTable, db: Kysely<DB>): Promise<Array<{ name: string; month: Date }>> {
  const [schema, name] = table.split('.')
  const { rows } = await sql<{ name: string }>`
    select child.relname as name
      from pg_inherits
      join pg_class parent on parent.oid = pg_inherits.inhparent
      join pg_namespace on pg_namespace.oid = parent.relnamespace
      join pg_class child on child.oid = pg_inherits.inhrelid
     where parent.relname = ${name} and pg_namespace.nspname = ${schema}`.execute(db)
  return rows
    .map((row) => ({ name: row.name, match: MONTH.exec(row.name) }))
    .filter((row): row is { name: string; match: RegExpExecArray } => row.match !== null)
    .map(({ name, match }) => ({ name, month: new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)) }))
    .sort((a, b) => a.month.getTime() - b.month.getTime())
}

/**
 * Creates the month partitions covering [from, to] that are missing. Under a lock per table, so
 * two services starting at once do not race on the same `create table`.
 */
export async function ensureMonthlyPartitions(target: PartitionedTable, db: Kysely<DB>, from: Date, to: Date): Promise<string[]> {
  const created: string[] = []
  await db.transaction().execute(async (trx) => {
    await lockUntilCommit(trx, `partitions:${target.table}`)
    const existing = new Set((await monthlyPartitions(target, trx)).map((partition) => partition.name))
    for (let month = monthStart(from); month <= to; month = nextMonth(month)) {
      const name = partitionName(target.table, month)
      if (existing.has(name)) continue
      await sql`
        create table ${sql.id(schemaOf(target.table), name)} partition of ${sql.raw(target.table)}
          for values from (${sql.lit(month.toISOString())}) to (${sql.lit(nextMonth(month).toISOString())})`.execute(trx)
      created.push(name)
    }
  })
  return created
}

/**
 * Drops the partitions whose whole month ends at or before `before`: retention by the month,
 * so a row lives between its retention and a month longer.
 */
export async function dropMonthlyPartitionsBefore(target: PartitionedTable, db: Kysely<DB>, before: Date): Promise<string[]> {
  const schema = schemaOf(target.table)
  const dropped: string[] = []
  for (const partition of await monthlyPartitions(target, db)) {
    if (nextMonth(partition.month) > before) break
    await sql`drop table if exists ${sql.id(schema, partition.name)}`.execute(db)
    dropped.push(partition.name)
  }
  return dropped
}
