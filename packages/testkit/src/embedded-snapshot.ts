import { createHash } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { dumpEmbedded, migrateToLatest, openDatabase, type Database } from '@svc/db'
import { createJobQueue, stopJobQueue } from '@svc/jobs'
import { migrations } from '@svc/migrations'

/**
 * Names the snapshot by its content (every migration's name and code), as the PostgreSQL
 * template is named, so a changed migration set never loads an old snapshot.
 */
export function migrationSetHash(): string {
  const hash = createHash('sha256')
  for (const [name, migration] of Object.entries(migrations)) hash.update(name).update(String(migration.up))
  return hash.digest('hex').slice(0, 16)
}

/** What a test database starts with: every migration, then pg-boss's schema (its first start). */
export async function prepareSchema(database: Database): Promise<void> {
  await migrateToLatest(database.db)
  let queueError: Error | undefined
  const jobs = createJobQueue({ sql: database.sql, supervise: false, onError: (error) => (queueError ??= error) })
  await jobs.start()
  await stopJobQueue(jobs)
  if (queueError) throw queueError
}

/** A fresh dump of a migrated embedded database (what the snapshot file holds). */
export async function buildEmbeddedSnapshot(): Promise<Blob> {
  const database = await openDatabase({})
  try {
    await prepareSchema(database)
    return await dumpEmbedded(database)
  } finally {
    await database.close()
  }
}

let snapshot: Promise<Blob> | undefined

/**
 * The migrated embedded database (migrations and pg-boss's schema) as a PGlite dump, which a
 * test's in-memory database loads in a fraction of the time migrating takes: PGlite's answer to
 * the PostgreSQL pass's template database. Built once per migration set and kept in the system's
 * temporary folder (written under a scratch name and renamed, so tap's parallel files never read
 * half of one); each test process reads it once.
 */
export function embeddedSnapshot(): Promise<Blob> {
  snapshot ??= (async () => {
    const file = path.join(os.tmpdir(), `svc-test-pglite-${migrationSetHash()}.tar`)
    try {
      return new Blob([await readFile(file)])
    } catch {
      const dump = await buildEmbeddedSnapshot()
      const scratch = `${file}.${process.pid}`
      await writeFile(scratch, Buffer.from(await dump.arrayBuffer()))
      await rename(scratch, file)
      return dump
    }
  })()
  return snapshot
}
