// What the benches of HTTP checks share (`bench:synthetics`, `bench:peers`' checks half): the
// product API running checks on a fresh PostgreSQL database, and a fleet of checks of one target.
import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'

/** The product API on `databaseUrl`, running checks of region `local`; what stops it goes first in `teardowns`. */
export async function startCheckRunner(databaseUrl: string, concurrency: number, teardowns: Array<() => unknown>): Promise<Kysely<DB>> {
  const issuer = await startTestIssuer({ teardown: (fn) => teardowns.unshift(fn) })
  const config = testConfig(issuer, {
    databaseUrl,
    databasePoolMax: 20,
    // Dropping the database at the end ends its idle connections, which the pool would report.
    logLevel: 'error',
    outbound: { allowPrivateTargets: true },
    synthetics: { region: 'local', retentionDays: 30, concurrency },
  })
  const resources = await openResources(config)
  teardowns.unshift(() => resources.close())
  const app = await buildApp(config, resources)
  teardowns.unshift(() => app.close())
  await app.ready()
  return resources.database.db
}

export interface CheckFleet {
  /** The organization's slug. */
  slug: string
  count: number
  targetUrl: string
  frequencySeconds: number
  /** When the first check falls due (ms since the epoch); the others follow, spread evenly over one period. */
  first: number
}

/** An organization with `count` HTTP checks of the target; answers each check's due time as an offset from `first` (ms). */
export async function insertHttpChecks(db: Kysely<DB>, fleet: CheckFleet): Promise<number[]> {
  const { slug, count, targetUrl, frequencySeconds, first } = fleet
  const organization = await db.insertInto('core.organizations').values({ name: 'Bench', slug }).returning('id').executeTakeFirstOrThrow()
  const offsets = Array.from({ length: count }, (_, index) => Math.floor((index * frequencySeconds * 1000) / count))
  // A thousand checks a statement keeps each under PostgreSQL's 65,535 parameters.
  for (let from = 0; from < count; from += 1000) {
    await db
      .insertInto('divinux.syntheticChecks')
      .values(
        offsets.slice(from, from + 1000).map((offset, index) => ({
          organizationId: organization.id,
          name: `Check ${from + index}`,
          kind: 'http',
          request: sql`${JSON.stringify({ url: targetUrl })}::jsonb`,
          frequencySeconds,
          timeoutMs: 5000,
          regions: sql`array['local']::text[]`,
          nextDueAt: new Date(first + offset),
        })) as never,
      )
      .execute()
  }
  return offsets
}
