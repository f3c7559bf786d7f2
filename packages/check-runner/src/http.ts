import { isIP } from 'node:net'
import type { OutboundPolicy } from '@svc/outbound'
import { Client, interceptors, util, type buildConnector, type Dispatcher } from 'undici'
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

/** Redirects an attempt follows at most, unless its check says not to follow any. */
const MAX_REDIRECTIONS = 10

/** How long before a server's keep-alive ends its connection is no longer reused. */
const KEEP_ALIVE_MARGIN_MS = 100

/** How the connections of one attempt are asked: a request and its handler, as undici's `dispatch`. */
interface AttemptConnections {
  dispatch: Dispatcher['dispatch']
  /** Closes every connection the attempt opened. */
  destroy(): void
}

/**
 * The connections of one attempt, made through our own connector: each phase (DNS, connect, TLS)
 * is timed, and the address is checked against the outbound policy when the connection is made
 * (a name that later resolves to a private address is still refused). Each attempt has its own,
 * so every attempt measures a fresh connection, as a user's first visit does.
 *
 * One undici `Client` per origin (a redirect may lead to another), redirects followed by undici's
 * redirect interceptor. Not an `Agent`: made for each attempt (its options deep-copied through
 * JSON, its clients' events forwarded, a dispatch layer more), it measured 70–200 µs of CPU more an
 * attempt, up to a sixth of it (decision 0032, "The attempt"); routing a redirect to its origin is
 * all an attempt needs of it.
 */
function attemptConnections(policy: OutboundPolicy, clock: PhaseClock, maxRedirections: number): AttemptConnections {
  const connect: buildConnector.connector = (options, callback) => {
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80)
    const phases = { ...clock }
    const first = clock.connect === undefined
    void (async () => {
      const address = await resolveTarget(options.hostname, policy, phases)
      const socket = await openSocket(address, port, phases)
      // SNI carries a host name, never an address (RFC 6066 3).
      const servername = options.servername || (isIP(options.hostname) ? undefined : options.hostname)
      const connected = options.protocol === 'https:' ? await startTls(socket, { servername, ALPNProtocols: ['http/1.1'] }, phases) : socket
      // A redirect's connection to another origin does not replace the first one's timings.
      if (first) Object.assign(clock, { dns: phases.dns, connect: phases.connect, tls: phases.tls })
      return connected
    })().then(
      (socket) => callback(null, socket),
      (error: Error) => callback(error, null),
    )
  }
  const clients = new Map<string, Client>()
  const routed: Dispatcher['dispatch'] = (options, handler) => {
    const origin = String(options.origin)
    let client = clients.get(origin)
    if (!client) {
      // Its socket is reused only by a redirect to the same origin, which follows at once. Under
      // undici's default margin (2 s), a server keeping connections alive 2 s or less has the
      // socket reset after each answer, with an error made and its stack formatted for it.
      client = new Client(origin, { connect, keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS })
      clients.set(origin, client)
    }
    return client.dispatch(options, handler)
  }
  return {
    dispatch: interceptors.redirect({ maxRedirections })(routed),
    destroy: () => {
      for (const client of clients.values()) void client.destroy(ATTEMPT_ENDED)
    },
  }
}

/** What one request answered: the status, headers and at most BODY_LIMIT of its body, and when its first byte came. */
interface Answer {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  body: string
  firstByte: number
}

/**
 * One request through undici's dispatch interface, redirects followed by its own redirect handler.
 * Not `request()`: that wraps each answer in a stream and its handler in an async resource, for a
 * body a check reads once; a handler keeping the chunks spares a tenth of the attempt's CPU
 * (decision 0032, "The attempt").
 */
function dispatch(connections: AttemptConnections, spec: HttpRequest, timeoutMs: number, clock: PhaseClock): Promise<Answer> {
  const url = new URL(spec.url)
  return new Promise((resolve, reject) => {
    let answer: Omit<Answer, 'body'> | undefined
    const chunks: Buffer[] = []
    let size = 0
    let abort: ((error: Error) => void) | undefined
    const settle = () => resolve({ ...answer!, body: Buffer.concat(chunks).subarray(0, BODY_LIMIT).toString('utf8') })
    const handler: Dispatcher.DispatchHandlers = {
      onConnect: (abortRequest) => {
        abort = abortRequest
      },
      onError: reject,
      onHeaders: (statusCode, rawHeaders) => {
        // An informational answer (1xx) is followed by the real one.
        if (statusCode < 200) return true
        answer = { statusCode, headers: util.parseHeaders(rawHeaders), firstByte: elapsed(clock) }
        return true
      },
      onData: (chunk) => {
        chunks.push(chunk)
        size += chunk.length
        if (size < BODY_LIMIT) return true
        // Assertions read no further: the rest is not downloaded.
        settle()
        abort?.(ATTEMPT_ENDED)
        return false
      },
      onComplete: settle,
    }
    connections.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: (spec.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: { 'user-agent': 'incident-platform-synthetics/1', ...spec.headers },
        body: spec.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      handler,
    )
  })
}

/** What one request saw: the observation, and the response's headers and body for what follows it (a next step). */
export interface Exchange {
  observation: Observation
  headers?: Record<string, string | string[] | undefined>
  body?: string
}

/** Why an attempt that ran out of time failed. */
class AttemptTimedOut extends Error {}

/** One request: its timings, status code, assertion outcomes, headers and body. */
export async function exchange(spec: HttpRequest, timeoutMs: number, policy: OutboundPolicy): Promise<Exchange> {
  const clock: PhaseClock = { start: performance.now() }
  const connections = attemptConnections(policy, clock, spec.followRedirects === false ? 0 : MAX_REDIRECTIONS)
  let timer: NodeJS.Timeout | undefined
  // A timer that ends with the attempt (`AbortSignal.timeout`'s runs out after it, however early it ended).
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new AttemptTimedOut(`timed out after ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    const { statusCode, headers, body, firstByte } = await Promise.race([dispatch(connections, spec, timeoutMs, clock), timedOut])
    const total = elapsed(clock)
    const assertions = evaluate(spec.assertions ?? [], { statusCode, responseTimeMs: total, headers, body })
    // No assertions: a status below 400 is what "up" means (Checkly's and OpenStatus' default).
    const failure = (spec.assertions ?? []).length === 0 && statusCode >= 400 ? `HTTP ${statusCode}` : undefined
    return {
      observation: {
        timings: { dns: clock.dns, connect: clock.connect, tls: clock.tls, firstByte, total },
        statusCode,
        assertions,
        error: failure,
      },
      headers,
      body,
    }
  } catch (error) {
    const reason =
      error instanceof AttemptTimedOut || (error as Error).name.endsWith('TimeoutError')
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
    connections.destroy()
  }
}

/** One HTTP attempt: the request, its timings, status code and assertion outcomes. */
export async function runHttp(spec: HttpRequest, timeoutMs: number, policy: OutboundPolicy): Promise<Observation> {
  return (await exchange(spec, timeoutMs, policy)).observation
}
