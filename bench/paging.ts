// `pnpm bench:paging`: signed alerts ingested at a steady rate (BENCH_PAGING_RATE a second, 100 by
// default, for BENCH_PAGING_DURATION seconds, 30) into a config whose one-step policy pages a
// user by e-mail and posts to a chat webhook, both received on loopback here. Reports p50, p99
// and the slowest time from each alert's 202 to the SMTP server accepting its e-mail and the
// chat receiver getting its message, and how many never arrived (issue 14's target: p99 under
// 1 s at 100 alerts/s on PostgreSQL). The service runs in a process of its own
// (bench/paging-server.ts) so the load and the receivers do not share its event loop.
// Every 5 s it also counts what waits at each stage of the pipeline in the service's database, so
// a queue that builds up shows which stage binds.
import { createHmac } from 'node:crypto'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { Pool } from 'undici'
import { startSmtpServer, startWebhookReceiver } from '@svc/testkit'
import { spawnBenchServer } from './bench-server.js'

const RATE = Number(process.env.BENCH_PAGING_RATE ?? 100)
const DURATION_SECONDS = Number(process.env.BENCH_PAGING_DURATION ?? 30)
// The first seconds of a fresh process (JIT, first connections to the SMTP server, pg-boss's
// workers starting) are sent at the same rate but measured apart, as bench:ingest's warm-up is.
const WARMUP_SECONDS = Number(process.env.BENCH_PAGING_WARMUP ?? 10)
const SETTLE_SECONDS = 30
const TARGET_P99_MS = 1000

const teardowns: Array<() => unknown> = []
const context = { teardown: (fn: () => unknown) => teardowns.push(fn) }
const smtp = await startSmtpServer(context)
const chat = await startWebhookReceiver(context)

const server = spawnBenchServer('bench/paging-server.ts', { BENCH_SMTP_URL: smtp.url, BENCH_CHAT_URL: `${chat.url}/services/T0/B0/bench` })
const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]()
const first = await lines.next()
if (first.done) throw new Error('the bench server stopped')
const target = JSON.parse(first.value) as { ingest: string; secret: string; databaseUrl: string }

/**
 * What waits at each stage, in order: `created` events correlation has not dispatched yet,
 * escalations not started, outbox messages (here the e-mails; chat posts are jobs of their own) not sent.
 */
const stages = new pg.Client({ connectionString: target.databaseUrl })
await stages.connect()
const backlog: Array<{ second: number; undispatched: number; pending: number; outbox: number }> = []

const url = new URL(target.ingest)
const pool = new Pool(url.origin, { connections: 50, pipelining: 1 })
const accepted = new Map<string, number>()
const warmup = new Map<string, number>()
let refused = 0

async function send(sequence: number, measured: Map<string, number>): Promise<void> {
  const title = `Paging bench ${process.pid}-${sequence}`
  const body = JSON.stringify({
    title,
    priority: 'P3',
    service: `service-${sequence % 20}`,
    fingerprint: `paging-${process.pid}-${sequence}`,
  })
  const signature = `sha256=${createHmac('sha256', target.secret).update(body).digest('hex')}`
  const response = await pool.request({
    path: url.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
    body,
  })
  await response.body.dump()
  if (response.statusCode === 202) measured.set(title, Date.now())
  else refused += 1
}

console.log(`sending ${RATE} signed alerts a second for ${WARMUP_SECONDS} s of warm-up, then ${DURATION_SECONDS} s measured…`)
const sends: Array<Promise<void>> = []
const started = performance.now()
const sampling = setInterval(() => {
  const second = Math.round((performance.now() - started) / 1000)
  stages
    .query<{ undispatched: number; pending: number; outbox: number }>(
      `select (select count(*) from divinux.alert_events where type = 'created' and dispatched_at is null)::int as undispatched,
         (select count(*) from divinux.alert_escalations where state = 'pending')::int as pending,
         (select count(*) from core.outbox where status = 'pending')::int as outbox`,
    )
    .then(({ rows: [row] }) => void (row && backlog.push({ second, ...row })))
    .catch(() => undefined)
}, 5000)
const warmupCount = RATE * WARMUP_SECONDS
for (let sequence = 0; sequence < warmupCount + RATE * DURATION_SECONDS; sequence += 1) {
  // Open loop: each alert leaves at its time, whether or not the ones before were answered.
  const due = started + (sequence * 1000) / RATE
  const wait = due - performance.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  sends.push(send(sequence, sequence < warmupCount ? warmup : accepted).catch(() => void (refused += 1)))
}
await Promise.all(sends)

const titleOf = {
  email: (subject: string) => subject.replace(/^\[P3\] /, ''),
  chat: (body: unknown) => ((body as { text?: string }).text ?? '').replace(/^\[P3\] /, '').replace(/ \(Service: .*$/, ''),
}
const arrivals = () => ({
  email: new Map(smtp.received.map((mail) => [titleOf.email(mail.subject), mail.at])),
  chat: new Map(chat.received.map((request) => [titleOf.chat(request.body), request.at])),
})
const settleBy = Date.now() + SETTLE_SECONDS * 1000
while (Date.now() < settleBy) {
  const { email, chat: posted } = arrivals()
  if ([...accepted.keys(), ...warmup.keys()].every((title) => email.has(title) && posted.has(title))) break
  await new Promise((resolve) => setTimeout(resolve, 200))
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
function report(channel: 'email' | 'chat', arrived: Map<string, number>) {
  const warmupLatencies = [...warmup].flatMap(([title, at]) => (arrived.has(title) ? [arrived.get(title)! - at] : [])).sort((a, b) => a - b)
  const latencies = [...accepted].flatMap(([title, at]) => (arrived.has(title) ? [arrived.get(title)! - at] : [])).sort((a, b) => a - b)
  const missing = accepted.size - latencies.length
  const p99 = quantile(latencies, 0.99)
  console.log(
    `${channel.padEnd(6)} p50 ${quantile(latencies, 0.5)} ms  p99 ${p99} ms  max ${latencies.at(-1)} ms  arrived ${latencies.length}/${accepted.size}${missing ? `  MISSING ${missing}` : ''}`,
  )
  console.log(
    `       warm-up p50 ${quantile(warmupLatencies, 0.5)} ms  p99 ${quantile(warmupLatencies, 0.99)} ms  arrived ${warmupLatencies.length}/${warmup.size} (not counted)`,
  )
  // Where in the run the slow ones were: a tail at the start is warm-up, one throughout is the pipeline.
  const bySecond = new Map<number, number[]>()
  for (const [title, at] of accepted) {
    const arrival = arrived.get(title)
    const second = Math.floor((at - firstAccepted) / 5000) * 5
    if (arrival !== undefined) bySecond.set(second, [...(bySecond.get(second) ?? []), arrival - at])
  }
  console.log(
    `       p99 by 5 s: ${[...bySecond]
      .sort(([a], [b]) => a - b)
      .map(
        ([second, values]) =>
          `${second}s ${quantile(
            values.sort((a, b) => a - b),
            0.99,
          )}`,
      )
      .join(', ')}`,
  )
  return missing === 0 && p99 < TARGET_P99_MS
}
clearInterval(sampling)
await stages.end()
const firstAccepted = Math.min(...accepted.values())
const { email, chat: posted } = arrivals()
console.log(`accepted ${accepted.size} measured (+${warmup.size} warm-up), refused ${refused}`)
const ok = [report('email', email), report('chat', posted)].every(Boolean) && refused === 0
console.log(
  `waiting, by 5 s since the first alert (events to correlate / escalations to start / e-mails to send): ${backlog
    .map((sample) => `${sample.second}s ${sample.undispatched}/${sample.pending}/${sample.outbox}`)
    .join(', ')}`,
)
console.log(
  ok ? `within the target (p99 < ${TARGET_P99_MS} ms, nothing lost)` : `NOT within the target (p99 < ${TARGET_P99_MS} ms, nothing lost)`,
)

await pool.close()
server.kill('SIGTERM')
await new Promise((resolve) => server.once('exit', resolve))
for (const teardown of teardowns) await teardown()
process.exit(ok ? 0 : 1)
