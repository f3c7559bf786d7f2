// The product API `pnpm bench:peers` measures running HTTP checks, in a process of its own (as in
// production, and as the ingestion half's server runs): a fresh PostgreSQL database with one
// organization and BENCH_CHECKS_COUNT HTTP checks of BENCH_CHECKS_TARGET every
// BENCH_CHECKS_FREQUENCY seconds, their due times spread evenly over a period that starts 100 s
// after it is ready. Prints one JSON line when ready (its database, when the first check is due);
// on SIGTERM closes and drops the database.
import { sql } from 'kysely'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
import { createBenchDatabase } from './database.js'

const targetUrl = process.env.BENCH_CHECKS_TARGET!
const checks = Number(process.env.BENCH_CHECKS_COUNT)
const frequencySeconds = Number(process.env.BENCH_CHECKS_FREQUENCY)

const database = await createBenchDatabase('bench_peers_checks')
const teardowns: Array<() => unknown> = [() => database.drop()]
const issuer = await startTestIssuer({ teardown: (fn) => teardowns.unshift(fn) })
const config = testConfig(issuer, {
  databaseUrl: database.url,
  databasePoolMax: 20,
  logLevel: 'error',
  outbound: { allowPrivateTargets: true },
  synthetics: { region: 'local', retentionDays: 30, concurrency: 100 },
})
const resources = await openResources(config)
teardowns.unshift(() => resources.close())
const app = await buildApp(config, resources)
teardowns.unshift(() => app.close())
await app.ready()
const db = resources.database.db
// A fresh process spends 45–60 ms of CPU a second in its first minute (JIT, first polls; decision
// 0033): the first check falls due 100 s from now, so that the bench measures its idle cost after
// that, just before, and its runs after a minute of them.
const first = Math.ceil((Date.now() + 100_000) / 1000) * 1000
const organization = await db
  .insertInto('core.organizations')
  .values({ name: 'Bench', slug: 'bench-peers' })
  .returning('id')
  .executeTakeFirstOrThrow()
await db
  .insertInto('divinux.syntheticChecks')
  .values(
    Array.from({ length: checks }, (_, index) => ({
      organizationId: organization.id,
      name: `Check ${index}`,
      kind: 'http',
      request: sql`${JSON.stringify({ url: targetUrl })}::jsonb`,
      frequencySeconds,
      timeoutMs: 5000,
      regions: sql`array['local']::text[]`,
      nextDueAt: new Date(first + Math.floor((index * frequencySeconds * 1000) / checks)),
    })) as never,
  )
  .execute()

console.log(JSON.stringify({ database: new URL(database.url).pathname.slice(1), url: database.url, first }))

process.once('SIGTERM', async () => {
  for (const teardown of teardowns) await teardown()
  process.exit(0)
})
