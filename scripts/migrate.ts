// `pnpm db:migrate`: applies pending migrations to DATABASE_URL, or to the embedded database
// under DATA_DIR (stop `pnpm start` first: the embedded database has one process at a time).
import { readEnvironment } from '@svc/config'
import { migrateToLatest, openDatabase } from '@svc/db'
import { exitOnConfigurationError } from '@svc/runtime'

const env = exitOnConfigurationError(() => readEnvironment())
const database = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR })
try {
  const { results = [] } = await migrateToLatest(database.db)
  for (const result of results) console.log(`${result.status === 'Success' ? 'applied' : result.status}: ${result.migrationName}`)
  if (results.length === 0) console.log('the database is up to date')
} finally {
  await database.close()
}
