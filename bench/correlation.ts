// `pnpm bench:correlation`: replays a labelled alert storm through real ingestion on PostgreSQL
// (issues 29 and 57). Causes each break a root service and the services that depend on it: a
// cause begins with its root's P1 alert, then its dependents and the root fire P2/P3 alerts with
// their own fingerprints, interleaved with the other causes; unrelated P4 noise from services
// nobody depends on is mixed in. By default it is issue 57's storm: 30 causes beginning one after
// another over the first half of the minute, 500 alerts a second for 60 s (30,000), sent open loop
// (each at its time whatever the answers do). The service (bench/paging-server.ts, one-step
// policy paging a user by e-mail and a chat webhook) runs in a process of its own with the default
// rules and the storm's dependency map. Reported, against issue 57's targets: e-mail pages per
// cause (exactly 1: the policy has one step and every cause must page), the time from a cause's
// first alert to its first page (p99 under 2 s), alerts refused (none); and as before, pairwise
// grouping precision, recall and F1 against the labels (at least 0.9) and the time from an
// alert's 202 to its incident link (reported; issue 29's p99 under 1 s held at 100 alerts/s).
// BENCH_CORRELATION_RATE, BENCH_CORRELATION_DURATION and BENCH_CORRELATION_CAUSES change the storm
// (issue 29's was 100, 30 and 5).
// BENCH_PROFILE=<dir> writes the service's CPU profile there (node --cpu-prof).
import { createHmac } from 'node:crypto'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { Pool } from 'undici'
import { startSmtpServer, startWebhookReceiver } from '@svc/testkit'
import { spawnBenchServer } from './bench-server.js'

const RATE = Number(process.env.BENCH_CORRELATION_RATE ?? 500)
const DURATION_SECONDS = Number(process.env.BENCH_CORRELATION_DURATION ?? 60)
const CAUSES = Number(process.env.BENCH_CORRELATION_CAUSES ?? 30)
const NOISE_SHARE = 0.2
const SETTLE_SECONDS = 60
/** Causes begin one after another over this share of the storm; each has its symptoms only once begun. */
const ONSET_SHARE = 0.5
const TARGETS = { pagesPerCause: 1, firstPageP99Ms: 2000, f1: 0.9 }

// Each cause: a root service and three services that depend on it.
const causes = Array.from({ length: CAUSES }, (_, index) => ({
  name: `cause-${index}`,
  root: `root-${index}`,
  dependents: ['api', 'web', 'worker'].map((part) => `${part}-${index}`),
}))
const dependencies = causes.flatMap((cause) => cause.dependents.map((dependent) => [dependent, cause.root]))

const teardowns: Array<() => unknown> = []
const context = { teardown: (fn: () => unknown) => teardowns.push(fn) }
const smtp = await startSmtpServer(context)
const chat = await startWebhookReceiver(context)
const server = spawnBenchServer('bench/paging-server.ts', {
  BENCH_SMTP_URL: smtp.url,
  BENCH_CHAT_URL: `${chat.url}/services/T0/B0/bench`,
  BENCH_DEPENDENCIES: JSON.stringify(dependencies),
})
const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]()
const first = await lines.next()
if (first.done) throw new Error('the bench server stopped')
const target = JSON.parse(first.value) as { ingest: string; secret: string; databaseUrl: string; organizationId: string }

interface Sent {
  title: string
  /** The cause the alert belongs to; undefined for noise. */
  cause: string | undefined
  sentAt?: number
  acceptedAt?: number
  alertId?: string
}

/** When each cause begins, in alerts from the start of the storm. */
const onsetOf = (index: number, total: number) => Math.floor((index * total * ONSET_SHARE) / CAUSES)

/** The storm: a cause's root P1 at its onset, then symptoms of the causes begun so far and noise, interleaved at random. */
function storm(total: number): Sent[] {
  const alerts: Array<Sent & { body: object }> = []
  let random = 42
  const next = () => (random = (random * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
  let begun = 0
  for (let sequence = 0; sequence < total; sequence += 1) {
    const opening = begun < causes.length && onsetOf(begun, total) <= sequence ? causes[begun] : undefined
    if (opening) {
      begun += 1
      alerts.push({ title: `${opening.root} down`, cause: opening.name, body: { priority: 'P1', service: opening.root } })
      continue
    }
    if (next() < NOISE_SHARE) {
      alerts.push({ title: `noise ${sequence}`, cause: undefined, body: { priority: 'P4', service: `noise-${sequence % 50}` } })
      continue
    }
    const cause = causes[Math.floor(next() * begun)]!
    const services = [cause.root, ...cause.dependents]
    const service = services[Math.floor(next() * services.length)]!
    alerts.push({ title: `${service} symptom ${sequence}`, cause: cause.name, body: { priority: next() < 0.3 ? 'P2' : 'P3', service } })
  }
  return alerts.map(({ body, ...alert }) =>
    Object.assign(alert, { body: JSON.stringify({ title: alert.title, fingerprint: alert.title, ...body }) }),
  )
}

const url = new URL(target.ingest)
const pool = new Pool(url.origin, { connections: 50, pipelining: 1 })
const alerts = storm(RATE * DURATION_SECONDS) as Array<Sent & { body: string }>
let refused = 0
async function send(alert: Sent & { body: string }) {
  alert.sentAt = Date.now()
  const signature = `sha256=${createHmac('sha256', target.secret).update(alert.body).digest('hex')}`
  const response = await pool.request({
    path: url.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
    body: alert.body,
  })
  const answer = (await response.body.json()) as { alertId?: string }
  if (response.statusCode !== 202 || !answer.alertId) refused += 1
  else Object.assign(alert, { acceptedAt: Date.now(), alertId: answer.alertId })
}

console.log(`${alerts.length} alerts of ${causes.length} causes and ${Math.round(NOISE_SHARE * 100)} % noise, ${RATE} a second…`)
const started = performance.now()
const sends: Array<Promise<void>> = []
for (const [index, alert] of alerts.entries()) {
  const due = started + (index * 1000) / RATE
  const wait = due - performance.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  sends.push(send(alert).catch(() => void (refused += 1)))
}
await Promise.all(sends)

const database = new pg.Client({ connectionString: target.databaseUrl })
await database.connect()
const accepted = alerts.filter((alert) => alert.alertId)
const links = async () =>
  (
    await database.query<{ alert_id: string; incident_id: string; linked_at: Date }>(
      'select alert_id, incident_id, linked_at from divinux.incident_alerts where organization_id = $1',
      [target.organizationId],
    )
  ).rows
const dispatched = async () =>
  Number(
    (
      await database.query<{ waiting: string }>(
        "select count(*) as waiting from divinux.alert_events where organization_id = $1 and type = 'created' and dispatched_at is null",
        [target.organizationId],
      )
    ).rows[0]!.waiting,
  ) === 0
const settleBy = Date.now() + SETTLE_SECONDS * 1000
while (Date.now() < settleBy && !(await dispatched())) await new Promise((resolve) => setTimeout(resolve, 200))
await new Promise((resolve) => setTimeout(resolve, 3000)) // the pages of the last escalations
const linked = new Map((await links()).map((row) => [row.alert_id, row]))

// Pages: e-mails per cause, by the title of the alert that paged, and each cause's first page
// from its first alert (when it was sent: the clock a user's storm starts on).
const causeOfTitle = new Map(alerts.map((alert) => [alert.title, alert.cause]))
const pages = new Map<string, number>()
const firstPageAt = new Map<string, number>()
/** Each cause's pages, by subject and when they came from the storm's first alert: printed for a cause paged more than once. */
const pagesOf = new Map<string, string[]>()
for (const mail of smtp.received) {
  const cause = causeOfTitle.get(mail.subject.replace(/^\[P\d\] /, ''))
  if (!cause) continue
  pages.set(cause, (pages.get(cause) ?? 0) + 1)
  pagesOf.set(cause, [...(pagesOf.get(cause) ?? []), `${mail.subject} at +${mail.at - alerts[0]!.sentAt!} ms`])
  firstPageAt.set(cause, Math.min(firstPageAt.get(cause) ?? Infinity, mail.at))
}
const everyCausePagedOnce = causes.every((cause) => pages.get(cause.name) === TARGETS.pagesPerCause)
const firstAlertAt = new Map<string, number>()
for (const alert of alerts) if (alert.cause && !firstAlertAt.has(alert.cause)) firstAlertAt.set(alert.cause, alert.sentAt!)
const firstPages = causes.map((cause) => (firstPageAt.get(cause.name) ?? Infinity) - firstAlertAt.get(cause.name)!).sort((a, b) => a - b)
const firstPageP99 = firstPages[Math.min(firstPages.length - 1, Math.floor(0.99 * firstPages.length))]!

// Pairwise grouping against the labels: noise belongs to no cause, an unlinked alert to no incident.
const pairs = (n: number) => (n * (n - 1)) / 2
const byBoth = new Map<string, number>()
const byIncident = new Map<string, number>()
const byCause = new Map<string, number>()
for (const alert of accepted) {
  const incident = linked.get(alert.alertId!)?.incident_id
  if (incident) byIncident.set(incident, (byIncident.get(incident) ?? 0) + 1)
  if (alert.cause) byCause.set(alert.cause, (byCause.get(alert.cause) ?? 0) + 1)
  if (incident && alert.cause) byBoth.set(`${incident}/${alert.cause}`, (byBoth.get(`${incident}/${alert.cause}`) ?? 0) + 1)
}
const truePositives = [...byBoth.values()].reduce((sum, n) => sum + pairs(n), 0)
const predicted = [...byIncident.values()].reduce((sum, n) => sum + pairs(n), 0)
const actual = [...byCause.values()].reduce((sum, n) => sum + pairs(n), 0)
const precision = predicted ? truePositives / predicted : 0
const recall = actual ? truePositives / actual : 0
const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0

// Ingest to incident: from the 202 to the link (the link's time is the database's clock at
// commit-time order; the 202 is this process's clock, both on this machine).
const latencies = accepted
  .flatMap((alert) => {
    const link = linked.get(alert.alertId!)
    return link ? [Math.max(0, link.linked_at.getTime() - alert.acceptedAt!)] : []
  })
  .sort((a, b) => a - b)
const quantile = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN
const noiseLinked = accepted.filter((alert) => !alert.cause && linked.has(alert.alertId!)).length
const causedUnlinked = accepted.filter((alert) => alert.cause && !linked.has(alert.alertId!)).length

console.log(`accepted ${accepted.length}, refused ${refused}; incidents ${byIncident.size} for ${causes.length} causes`)
console.log(
  `pages per cause: ${causes.map((cause) => `${cause.name} ${pages.get(cause.name) ?? 0}`).join(', ')} (target: exactly ${TARGETS.pagesPerCause})`,
)
for (const [cause, subjects] of pagesOf) if (subjects.length > 1) console.log(`  ${cause}: ${subjects.join('; ')}`)
console.log(
  `first page from a cause's first alert: p50 ${firstPages[Math.floor(firstPages.length / 2)]} ms  p99 ${firstPageP99} ms  max ${firstPages.at(-1)} ms (target p99 < ${TARGETS.firstPageP99Ms} ms)`,
)
console.log(
  `grouping: precision ${precision.toFixed(3)}  recall ${recall.toFixed(3)}  F1 ${f1.toFixed(3)} (target ≥ ${TARGETS.f1}); noise grouped ${noiseLinked}, caused alerts left out ${causedUnlinked}`,
)
console.log(`ingest to incident: p50 ${quantile(0.5)} ms  p99 ${quantile(0.99)} ms  max ${latencies.at(-1)} ms`)
const ok = refused === 0 && everyCausePagedOnce && firstPageP99 < TARGETS.firstPageP99Ms && f1 >= TARGETS.f1
console.log(ok ? 'within the targets' : 'NOT within the targets')

await database.end()
await pool.close()
server.kill('SIGTERM')
await new Promise((resolve) => server.once('exit', resolve))
for (const teardown of teardowns) await teardown()
process.exit(ok ? 0 : 1)
