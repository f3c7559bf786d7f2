// The product API `pnpm bench:peers` measures running HTTP checks, in a process of its own (as in
// production, and as the ingestion half's server runs): a fresh PostgreSQL database with one
// organization and BENCH_CHECKS_COUNT HTTP checks of BENCH_CHECKS_TARGET every
// BENCH_CHECKS_FREQUENCY seconds, their due times spread evenly over a period that starts 100 s
// after it is ready. Prints one JSON line when ready (its database, when the first check is due);
// on SIGTERM closes and drops the database.
import { insertHttpChecks, startCheckRunner } from './check-fleet.js'
import { createBenchDatabase } from './database.js'

const database = await createBenchDatabase('bench_peers_checks')
const teardowns: Array<() => unknown> = [() => database.drop()]
const db = await startCheckRunner(database.url, 100, teardowns)
// A fresh process spends 45–60 ms of CPU a second in its first minute (JIT, first polls; decision
// 0033): the first check falls due 100 s from now, so that the bench measures its idle cost after
// that, just before, and its runs after a minute of them.
const first = Math.ceil((Date.now() + 100_000) / 1000) * 1000
await insertHttpChecks(db, {
  slug: 'bench-peers',
  count: Number(process.env.BENCH_CHECKS_COUNT),
  targetUrl: process.env.BENCH_CHECKS_TARGET!,
  frequencySeconds: Number(process.env.BENCH_CHECKS_FREQUENCY),
  first,
})

console.log(JSON.stringify({ database: new URL(database.url).pathname.slice(1), url: database.url, first }))

process.once('SIGTERM', async () => {
  for (const teardown of teardowns) await teardown()
  process.exit(0)
})
