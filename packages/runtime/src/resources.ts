import { createSessionCache, createSigningKeyResolver, type SessionCache, type SigningKeyResolver } from '@svc/auth'
import type { ServiceConfig } from '@svc/config'
import { migrateToLatest, openDatabase, type Database } from '@svc/db'
import { createJobQueue, stopJobQueue, type JobQueue } from '@svc/jobs'

/**
 * What the services of one process share: one database handle, one job queue, one JWKS
 * budget, one cache of verified sessions.
 */
export interface Resources {
  database: Database
  jobs: JobQueue
  signingKeys: SigningKeyResolver
  sessions: SessionCache
  close(): Promise<void>
}

export interface ResourceOptions {
  /** Keep the embedded database in memory instead of under `dataDir` (tests). */
  inMemory?: boolean
  onJobError?: (error: Error) => void
}

/** Opens the database, applies pending migrations (under an advisory lock) and starts the queue. */
export async function openResources(config: ServiceConfig, options: ResourceOptions = {}): Promise<Resources> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: options.inMemory ? undefined : config.dataDir,
  })
  try {
    await migrateToLatest(database.db)
    const jobs = createJobQueue({ sql: database.sql, onError: options.onJobError })
    await jobs.start()
    return {
      database,
      jobs,
      signingKeys: createSigningKeyResolver({ jwksUrl: config.auth.jwksUrl }),
      sessions: createSessionCache(),
      async close() {
        // Workers finish their jobs before the connections they use go away.
        await stopJobQueue(jobs)
        await database.close()
      },
    }
  } catch (error) {
    await database.close()
    throw error
  }
}
