import { isIP } from 'node:net'
import type { OutboundPolicy } from '@svc/outbound'
import { Agent, request, type Dispatcher } from 'undici'
import { evaluate } from './assertions.js'
import { elapsed, openSocket, resolveTarget, startTls, type PhaseClock } from './connect.js'
import type { HttpRequest } from './definitions.js'
import type { Observation } from './observation.js'

/** Assertions read at most this much of a body; the rest is not downloaded. */
const BODY_LIMIT = 1024 * 1024

/**
 * What an attempt's dispatcher is destroyed with once the attempt has ended: nothing is waiting on
 * it by then, and undici makes an error for each destruction it is not given one for. One made
 * once spares each attempt that error and its stack (formatted through source maps when the
 * socket it closes reads it): some 40–80 µs an attempt in `pnpm bench:peers`' profile.
 */
const ATTEMPT_ENDED = new Error('the check attempt has ended')

/**
 * An undici dispatcher whose connections go through our own connector: each phase (DNS,
 * connect, TLS) is timed, and the address is checked against the outbound policy when the
 * connection is made (a name that later resolves to a private address is still refused).
 * One per attempt, so every attempt measures a fresh connection, as a user's first visit does;
 * one connection per origin, so each origin's dispatcher is a `Client`, not a `Pool` of them.
 */
function timedAgent(policy: OutboundPolicy, clock: PhaseClock): Agent {
  return new Agent({
    connections: 1,
    connect: (options, callback) => {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80)
      const phases = { ...clock }
      const first = clock.connect === undefined
      void (async () => {
        const address = await resolveTarget(options.hostname, policy, phases)
        const socket = await openSocket(address, port, phases)
        // SNI carries a host name, never an address (RFC 6066 3).
        const servername = options.servername || (isIP(options.hostname) ? undefined : options.hostname)
        const connected =
          options.protocol === 'https:' ? await startTls(socket, { servername, ALPNProtocols: ['http/1.1'] }, phases) : socket
        // A redirect's connection to another origin does not replace the first one's timings.
        if (first) Object.assign(clock, { dns: phases.dns, connect: phases.connect, tls: phases.tls })
        return connected
      })().then(
        (socket) => callback(null, socket),
        (error: Error) => callback(error, null),
      )
    },
  })
}

async function readLimited(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const buffer = chunk as Buffer
    chunks.push(buffer)
    size += buffer.length
    if (size >= BODY_LIMIT) {
      body.destroy()
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, BODY_LIMIT).toString('utf8')
}

/** What one request saw: the observation, and the response's headers and body for what follows it (a next step). */
export interface Exchange {
  observation: Observation
  headers?: Record<string, string | string[] | undefined>
  body?: string
}

/** One request: its timings, status code, assertion outcomes, headers and body. */
export async function exchange(spec: HttpRequest, timeoutMs: number, policy: OutboundPolicy): Promise<Exchange> {
  const clock: PhaseClock = { start: performance.now() }
  const agent = timedAgent(policy, clock)
  // Not `AbortSignal.timeout`: its timer runs out after the attempt too, however early it ended,
  // and makes its TimeoutError then unless the signal was collected. This one ends with the attempt.
  const timeout = new AbortController()
  const timer = setTimeout(() => timeout.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
  try {
    const response = await request(spec.url, {
      dispatcher: agent,
      method: spec.method ?? 'GET',
      headers: { 'user-agent': 'incident-platform-synthetics/1', ...spec.headers },
      body: spec.body,
      maxRedirections: spec.followRedirects === false ? 0 : 10,
      signal: timeout.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    })
    const firstByte = elapsed(clock)
    const body = spec.method === 'HEAD' ? '' : await readLimited(response.body)
    const total = elapsed(clock)
    const assertions = evaluate(spec.assertions ?? [], {
      statusCode: response.statusCode,
      responseTimeMs: total,
      headers: response.headers,
      body,
    })
    // No assertions: a status below 400 is what "up" means (Checkly's and OpenStatus' default).
    const failure = (spec.assertions ?? []).length === 0 && response.statusCode >= 400 ? `HTTP ${response.statusCode}` : undefined
    return {
      observation: {
        timings: { dns: clock.dns, connect: clock.connect, tls: clock.tls, firstByte, total },
        statusCode: response.statusCode,
        assertions,
        error: failure,
      },
      headers: response.headers,
      body,
    }
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError'
        ? `timed out after ${timeoutMs} ms`
        : (error as Error).message
    return {
      observation: {
        timings: { dns: clock.dns, connect: clock.connect, tls: clock.tls, total: elapsed(clock) },
        assertions: [],
        error: reason,
      },
    }
  } finally {
    clearTimeout(timer)
    void agent.destroy(ATTEMPT_ENDED)
  }
}

/** One HTTP attempt: the request, its timings, status code and assertion outcomes. */
export async function runHttp(spec: HttpRequest, timeoutMs: number, policy: OutboundPolicy): Promise<Observation> {
  return (await exchange(spec, timeoutMs, policy)).observation
}
