import { migrations } from '@svc/migrations'
import { Migrator, type Kysely, type MigrationResultSet } from 'kysely'
import type { DB } from './generated.js'

/**
 * Applies every pending migration. Kysely's PostgreSQL adapter holds
 * `pg_advisory_xact_lock` for the whole run, so replicas starting together apply each
 * migration once; the others wait and then find nothing to do.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db: db.withoutPlugins(), provider: { getMigrations: async () => migrations } })
  const result = await migrator.migrateToLatest()
  if (result.error) throw result.error
  return result
}
