import { Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { OutboundPolicy } from '@svc/outbound'
import { evaluate } from './assertions.js'
import { elapsed, resolveTarget, type PhaseClock } from './connect.js'
import type { DnsRequest } from './definitions.js'
import type { Observation } from './observation.js'

/** `host`, `host:port`, `[v6]` or `[v6]:port`. */
function splitServer(server: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server)
  if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2] ?? 53) }
  if (isIP(server) === 6) return { host: server, port: 53 }
  const [host = server, port] = server.split(':')
  return { host, port: Number(port ?? 53) }
}

/** Every answer as one line of text, in the form `dig +short` prints it. */
async function answers(resolver: Resolver, spec: DnsRequest): Promise<string[]> {
  switch (spec.recordType) {
    case 'A':
      return resolver.resolve4(spec.name)
    case 'AAAA':
      return resolver.resolve6(spec.name)
    case 'CNAME':
      return resolver.resolveCname(spec.name)
    case 'NS':
      return resolver.resolveNs(spec.name)
    case 'MX':
      return (await resolver.resolveMx(spec.name)).map((record) => `${record.priority} ${record.exchange}`)
    case 'TXT':
      return (await resolver.resolveTxt(spec.name)).map((chunks) => chunks.join(''))
    case 'SRV':
      return (await resolver.resolveSrv(spec.name)).map((record) => `${record.priority} ${record.weight} ${record.port} ${record.name}`)
    case 'CAA':
      return (await resolver.resolveCaa(spec.name)).map((record) => {
        const [tag = 'issue', value = ''] = Object.entries(record).find(([key]) => key !== 'critical') ?? []
        return `${record.critical} ${tag} "${String(value)}"`
      })
  }
}

const normalized = (value: string) => value.trim().replace(/\.$/, '').toLowerCase()

/**
 * One DNS attempt: the name resolves with the record type; every expected value is among the
 * answers (compared without case or a trailing dot). The answers are the `body` assertions read.
 */
export async function runDns(spec: DnsRequest, timeoutMs: number, policy: OutboundPolicy): Promise<Observation> {
  const clock: PhaseClock = { start: performance.now() }
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 })
  try {
    if (spec.nameserver) {
      const { host, port } = splitServer(spec.nameserver)
      const address = await resolveTarget(host, policy, { start: clock.start })
      resolver.setServers([isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`])
    }
    const found = await answers(resolver, spec)
    const total = elapsed(clock)
    const missing = (spec.expectedValues ?? []).filter((value) => !found.some((answer) => normalized(answer) === normalized(value)))
    return {
      timings: { dns: total, total },
      assertions: evaluate(spec.assertions ?? [], { responseTimeMs: total, body: found.join('\n') }),
      error: missing.length > 0 ? `expected ${missing.map((value) => JSON.stringify(value)).join(', ')} among the answers` : undefined,
      details: { answers: found },
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const message =
      code === 'ETIMEOUT' ? `timed out after ${timeoutMs} ms` : code ? `${spec.recordType} ${spec.name}: ${code}` : (error as Error).message
    return { timings: { total: elapsed(clock) }, assertions: [], error: message }
  } finally {
    resolver.cancel()
  }
}
