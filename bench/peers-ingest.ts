// Ingestion against Prometheus Alertmanager (issue 57): one new ~1 KB alert per request, sent by
// 50 connections to Alertmanager's own API (`POST /api/v2/alerts`, kept in memory) and to our
// signed durable ingestion in the generic and Alertmanager formats, alternating in halves so a
// drift of the shared machine weighs on each alike. Every 2xx of ours must be an alert stored.
// Beside them, the floor of ingestion durable in PostgreSQL here: a bare Fastify that commits each
// body as it came, in group commits, to a table with a primary key only. What it reaches bounds
// what any ingestion storing its alerts in PostgreSQL on this machine can.
import { createHmac } from 'node:crypto'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { databaseProcesses, machineCpu, processCpu } from './cpu.js'
import { postLoad, type LoadRequest, type LoadResult } from './http-load.js'
import { startAlertmanager } from './peer-process.js'

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const SECONDS = Number(process.env.BENCH_PEERS_INGEST_SECONDS ?? 20)
/** Issue 57: at least this share of Alertmanager's alerts a second, every accepted alert durable. */
export const INGEST_TARGET = 0.75

const PADDING = 'x'.repeat(700)
let sequence = 0

/** The same alert for every target: a title, a service, a fingerprint of its own, ~1 KB of description. */
function nextAlert() {
  sequence += 1
  return {
    name: `Synthetic alert ${sequence}`,
    service: `service-${sequence % 20}`,
    fingerprint: `peers-${process.pid}-${sequence}`,
    labels: { region: 'eu-west-1', team: 'bench', sequence: String(sequence) },
  }
}

const alertmanagerApiRequest = (): LoadRequest => {
  const alert = nextAlert()
  return {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      {
        labels: { alertname: alert.name, service: alert.service, fingerprint: alert.fingerprint, ...alert.labels },
        annotations: { description: PADDING },
        startsAt: new Date().toISOString(),
      },
    ]),
  }
}

const signed = (secret: string, body: string): LoadRequest => ({
  body,
  headers: {
    'content-type': 'application/json',
    'x-webhook-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  },
})

const genericRequest = (secret: string) => (): LoadRequest => {
  const alert = nextAlert()
  return signed(
    secret,
    JSON.stringify({
      title: alert.name,
      description: PADDING,
      priority: 'P3',
      service: alert.service,
      fingerprint: alert.fingerprint,
      labels: alert.labels,
    }),
  )
}

/** Alertmanager's webhook payload (version 4) with one alert, as Alertmanager sends it to a receiver. */
const alertmanagerWebhookRequest = (secret: string) => (): LoadRequest => {
  const alert = nextAlert()
  const labels = { alertname: alert.name, service: alert.service, severity: 'warning', ...alert.labels }
  return signed(
    secret,
    JSON.stringify({
      version: '4',
      groupKey: `{}:{alertname="${alert.name}"}`,
      status: 'firing',
      receiver: 'divinux',
      groupLabels: { alertname: alert.name },
      commonLabels: labels,
      commonAnnotations: { description: PADDING },
      externalURL: 'http://alertmanager.example:9093',
      alerts: [
        {
          status: 'firing',
          labels,
          annotations: { description: PADDING },
          startsAt: new Date().toISOString(),
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: 'http://prometheus.example:9090/graph',
          fingerprint: alert.fingerprint.slice(-16),
        },
      ],
    }),
  )
}

interface Run extends LoadResult {
  /** µs of CPU: the target's server process, and PostgreSQL's for our database. */
  server: number
  database: number
  /** µs of CPU of this process, the load generator. */
  loader: number
  /** The machine's idle and total CPU time over the load (µs, all cores). */
  idle: number
  total: number
}

const ownCpu = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

/** The load, with the CPU the target's server and database spent on it. */
async function load(
  url: string,
  seconds: number,
  request: () => LoadRequest,
  cpu: { server: number; databasePids: () => number[] },
): Promise<Run> {
  const serverBefore = processCpu(cpu.server)
  // Listed at each load: the pool opens connections as the load needs them.
  const databasePids = cpu.databasePids()
  const databaseBefore = databasePids.map(processCpu)
  const loaderBefore = ownCpu()
  const machineBefore = machineCpu()
  const result = await postLoad(url, seconds, CONNECTIONS, request)
  const machineAfter = machineCpu()
  const loader = ownCpu() - loaderBefore
  const database = databasePids.reduce((sum, pid, index) => {
    const spent = processCpu(pid) - databaseBefore[index]!
    return Number.isFinite(spent) ? sum + spent : sum
  }, 0)
  return {
    ...result,
    server: processCpu(cpu.server) - serverBefore,
    database,
    loader,
    idle: machineAfter.idle - machineBefore.idle,
    total: machineAfter.total - machineBefore.total,
  }
}

function combined(runs: Run[]) {
  const latencies = runs.flatMap((run) => run.latencies).sort((a, b) => a - b)
  const accepted = runs.reduce((sum, run) => sum + run.accepted, 0)
  const rejected = runs.reduce((sum, run) => sum + run.rejected, 0)
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0)
  const events = Math.max(1, accepted + rejected)
  return {
    accepted,
    rejected,
    perSecond: accepted / seconds,
    p99: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    serverCpu: runs.reduce((sum, run) => sum + run.server, 0) / events,
    databaseCpu: runs.reduce((sum, run) => sum + run.database, 0) / events,
    loaderCpu: runs.reduce((sum, run) => sum + run.loader, 0) / events,
    /** The share of the machine's CPU nobody used during the load: above zero, the target waited rather than worked. */
    idleShare: runs.reduce((sum, run) => sum + run.idle, 0) / runs.reduce((sum, run) => sum + run.total, 0),
  }
}

export interface IngestComparison {
  lines: string[]
  ratios: { generic: number; alertmanager: number; floor: number }
  durable: boolean
}

/** Runs the comparison; answers the table's lines, our two ratios to Alertmanager, and whether nothing was lost. */
export async function ingestAgainstAlertmanager(): Promise<IngestComparison> {
  const alertmanager = await startAlertmanager()
  const server = spawn(process.execPath, ['--conditions=@svc/source', '--import', 'tsx', 'bench/ingest-server.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: server.stdout! })[Symbol.asyncIterator]()
  const nextLine = async () => {
    const line = await lines.next()
    if (line.done) throw new Error('the bench server stopped')
    return JSON.parse(line.value) as Record<string, string>
  }
  try {
    const targets = await nextLine()
    const ours = { server: server.pid!, databasePids: () => databaseProcesses(targets.database!) }
    const peer = { server: alertmanager.pid, databasePids: () => [] }
    const cases = [
      {
        label: 'Alertmanager 0.25, POST /api/v2/alerts (in memory)',
        url: `${alertmanager.url}/api/v2/alerts`,
        request: alertmanagerApiRequest,
        cpu: peer,
      },
      {
        label: 'floor: a bare Fastify committing each body to PostgreSQL (primary key only, group commit)',
        url: targets.floor!,
        request: alertmanagerApiRequest,
        cpu: ours,
      },
      // Our ingestion: each of its 2xx answers must be an alert stored.
      {
        label: 'ours, generic format, signed, durable',
        url: targets.ingest!,
        request: genericRequest(targets.secret!),
        cpu: ours,
        storesAlerts: true,
      },
      {
        label: 'ours, Alertmanager format, signed, durable',
        url: targets.alertmanagerIngest!,
        request: alertmanagerWebhookRequest(targets.alertmanagerSecret!),
        cpu: ours,
        storesAlerts: true,
      },
    ]
    let warmAccepted = 0
    for (const entry of cases) {
      const warm = await load(entry.url, 3, entry.request, entry.cpu)
      if (entry.storesAlerts) warmAccepted += warm.accepted
    }
    const runs: Run[][] = cases.map(() => [])
    for (let round = 0; round < 2; round++)
      for (const [index, entry] of cases.entries()) runs[index]!.push(await load(entry.url, SECONDS / 2, entry.request, entry.cpu))
    const results = runs.map(combined)
    server.kill('SIGTERM')
    const { alerts } = (await nextLine()) as unknown as { alerts: number }
    // It drops its database, then exits.
    await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once('exit', resolve)))
    const answered = results.reduce((sum, result, index) => (cases[index]!.storesAlerts ? sum + result.accepted : sum), warmAccepted)
    const [peerResult, floor, generic, webhook] = results as [
      ReturnType<typeof combined>,
      ReturnType<typeof combined>,
      ReturnType<typeof combined>,
      ReturnType<typeof combined>,
    ]
    const table = [
      `Ingestion, ${CONNECTIONS} connections, one new ~1 KB alert per request, ${SECONDS} s per target in two alternating halves, Node ${process.version}, PostgreSQL`,
      '',
      '| target | alerts/s | p99 (ms) | 2xx | other | server CPU per alert (µs) | PostgreSQL CPU per alert (µs) | load generator CPU per alert (µs) | machine idle | ratio to Alertmanager |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...cases.map((entry, index) => {
        const result = results[index]!
        return `| ${entry.label} | ${result.perSecond.toFixed(0)} | ${result.p99} | ${result.accepted} | ${result.rejected} | ${result.serverCpu.toFixed(0)} | ${index === 0 ? '—' : result.databaseCpu.toFixed(0)} | ${result.loaderCpu.toFixed(0)} | ${(100 * result.idleShare).toFixed(0)} % | ${(result.perSecond / peerResult.perSecond).toFixed(2)} |`
      }),
      '',
      `our alerts stored: ${alerts}; our 2xx answers (warm-up included): ${answered}; ${alerts === answered ? 'none lost' : `MISMATCH of ${answered - alerts}`}`,
      `the floor of durable ingestion on this machine: ${(floor.perSecond / peerResult.perSecond).toFixed(2)} of Alertmanager's alerts a second`,
    ]
    return {
      lines: table,
      ratios: {
        generic: generic.perSecond / peerResult.perSecond,
        alertmanager: webhook.perSecond / peerResult.perSecond,
        floor: floor.perSecond / peerResult.perSecond,
      },
      durable: alerts === answered && generic.rejected === 0 && webhook.rejected === 0,
    }
  } finally {
    if (server.exitCode === null && !server.killed) server.kill('SIGTERM')
    await alertmanager.stop()
  }
}
