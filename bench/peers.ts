// `pnpm bench:peers` (issue 57): our services against the tools users would run instead, side by
// side in one run on this machine, Debian's packages started on loopback beside us:
// - ingestion against Prometheus Alertmanager's API (bench/peers-ingest.ts), target: at least
//   0.75 of its alerts a second with every accepted alert durable; beside them the floor of
//   ingestion durable in PostgreSQL on this machine (a bare Fastify committing each body);
// - HTTP checks against blackbox_exporter (bench/peers-checks.ts), target: at most 1.5 times its
//   CPU per check run, our results stored.
// Prints the peer's figure, ours and the ratio; exits 1 below a target. BENCH_PEERS_ONLY=ingest or
// checks runs one half. Needs PostgreSQL (TEST_DATABASE_URL or the local server).
import { checksAgainstBlackbox, CHECKS_TARGET } from './peers-checks.js'
import { ingestAgainstAlertmanager, INGEST_TARGET } from './peers-ingest.js'

const only = process.env.BENCH_PEERS_ONLY
const verdicts: string[] = []
let met = true

if (only !== 'checks') {
  const ingest = await ingestAgainstAlertmanager()
  console.log(`\n${ingest.lines.join('\n')}`)
  const ok = ingest.durable && ingest.ratios.generic >= INGEST_TARGET && ingest.ratios.alertmanager >= INGEST_TARGET
  met &&= ok
  verdicts.push(
    `ingestion: generic ${ingest.ratios.generic.toFixed(2)}, Alertmanager format ${ingest.ratios.alertmanager.toFixed(2)} of Alertmanager's alerts/s (target ≥ ${INGEST_TARGET}; the floor of durable ingestion here ${ingest.ratios.floor.toFixed(2)}), ${ingest.durable ? 'none lost' : 'ALERTS LOST OR REFUSED'}: ${ok ? 'met' : 'NOT met'}`,
  )
}
if (only !== 'ingest') {
  const checks = await checksAgainstBlackbox()
  console.log(`\n${checks.lines.join('\n')}`)
  const ok = checks.ratio <= CHECKS_TARGET
  met &&= ok
  verdicts.push(
    `checks: ${checks.ratio.toFixed(2)}× blackbox_exporter's CPU per run (target ≤ ${CHECKS_TARGET}×): ${ok ? 'met' : 'NOT met'}`,
  )
}
console.log(`\n${verdicts.join('\n')}`)
process.exitCode = met ? 0 : 1
