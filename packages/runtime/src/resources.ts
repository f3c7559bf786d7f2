import pino, { type Logger } from 'pino'
import { createSessionCache, createSigningKeyResolver, type SessionCache, type SigningKeyResolver } from '@svc/auth'
import type { ServiceConfig } from '@svc/config'
import { migrateToLatest, openDatabase, type Database } from '@svc/db'
import { countJobs, createJobQueue, jobQueueProbe, stopJobQueue, type JobQueue } from '@svc/jobs'
import { jobQueueErrors, trackJobQueue } from '@svc/metrics'
import { connectSharedState, type SharedState } from './shared-state.js'

/**
 * What the services of one process share: one database handle, one job queue, one JWKS
 * budget, one cache of verified sessions.
 */
export interface Resources {
  database: Database
  jobs: JobQueue
  signingKeys: SigningKeyResolver
  sessions: SessionCache
  /** Where the shared parts log what happens outside any request (pool and queue errors). */
  log: Logger
  /** REDIS_URL set: what the replicas share through Redis. */
  shared?: SharedState
  /** Readiness: rejects when the job queue has stopped or its schema cannot be read. */
  checkJobQueue(): Promise<void>
  close(): Promise<void>
}

export interface ResourceOptions {
  /** Keep the embedded database in memory instead of under `dataDir` (tests). */
  inMemory?: boolean
  /** With `inMemory`: a dump of an already-migrated embedded database to start from (tests). */
  seed?: Blob
  /** Unset: a pino logger at the configured level, tagged `component: resources`. */
  log?: Logger
  /** Prefix of Redis keys and channels; tests use one of their own. */
  redisNamespace?: string
}

/** Opens the database, applies pending migrations (under an advisory lock) and starts the queue. */
export async function openResources(config: ServiceConfig, options: ResourceOptions = {}): Promise<Resources> {
  const log = options.log ?? pino({ level: config.logLevel, base: { component: 'resources' } })
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    poolSize: config.databasePoolMax,
    listenUrl: config.databaseListenUrl,
    dataDir: options.inMemory ? undefined : config.dataDir,
    seed: options.inMemory ? options.seed : undefined,
    onPoolError: (error) => log.warn({ err: error }, 'a database connection was lost; the pool replaces it'),
  })
  try {
    await migrateToLatest(database.db)
    const jobs = createJobQueue({
      sql: database.sql,
      census: { prepared: database.prepared },
      onError: (error) => {
        jobQueueErrors.inc()
        log.error({ err: error }, 'job queue error')
      },
    })
    const checkJobQueue = jobQueueProbe(jobs)
    await jobs.start()
    const untrack = trackJobQueue(() => countJobs(database.sql))
    const shared = config.redisUrl ? await connectSharedState(config.redisUrl, options.redisNamespace ?? 'svc:', log) : undefined
    const sessions = createSessionCache({ announceForget: shared?.announceForget })
    shared?.onForget((userId) => sessions.forgetHere(userId))
    return {
      database,
      jobs,
      signingKeys: createSigningKeyResolver({ jwksUrl: config.auth.jwksUrl }),
      sessions,
      log,
      shared,
      checkJobQueue,
      async close() {
        untrack()
        // Workers finish their jobs before the connections they use go away.
        await stopJobQueue(jobs)
        await shared?.close()
        await database.close()
      },
    }
  } catch (error) {
    await database.close()
    throw error
  }
}
