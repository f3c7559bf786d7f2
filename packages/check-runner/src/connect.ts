import { lookup, type LookupAddress } from 'node:dns'
import { connect as netConnect, isIP, type Socket } from 'node:net'
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls'
import { checkAddress, type OutboundPolicy } from '@svc/outbound'

/** Milliseconds since the attempt began at which each phase ended. */
export interface PhaseClock {
  start: number
  dns?: number
  connect?: number
  tls?: number
}

export const elapsed = (clock: PhaseClock) => performance.now() - clock.start

/** The outbound rule's refusal of an address, as a value (undefined: allowed). */
function refused(address: string, policy: OutboundPolicy): Error | undefined {
  try {
    checkAddress(address, policy)
    return undefined
  } catch (error) {
    return error as Error
  }
}

/** Resolves a host (timed) to the address to connect to, refusing non-public ones under the policy. */
export function resolveTarget(host: string, policy: OutboundPolicy, clock: PhaseClock): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '')
  return new Promise((resolve, reject) => {
    const answer = (address: string) => {
      const error = refused(address, policy)
      if (error) reject(error)
      else resolve(address)
    }
    if (isIP(bare)) {
      clock.dns = 0
      return answer(bare)
    }
    lookup(bare, { all: true }, (error, found: LookupAddress[]) => {
      clock.dns = elapsed(clock)
      if (error) return reject(new Error(`DNS lookup of ${bare} failed: ${error.code ?? error.message}`))
      // Every address the name has must be allowed, not only the first (as @svc/outbound checks).
      for (const entry of found) {
        const problem = refused(entry.address, policy)
        if (problem) return reject(problem)
      }
      answer(found[0]!.address)
    })
  })
}

/** A TCP connection to an address, timed; rejects on error. */
export function openSocket(address: string, port: number, clock: PhaseClock): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: address, port })
    socket.once('connect', () => {
      clock.connect = elapsed(clock)
      socket.removeListener('error', reject)
      resolve(socket)
    })
    socket.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`connection to ${address}:${port} failed: ${error.code ?? error.message}`)),
    )
  })
}

/** TLS over an open socket, timed. Untrusted chains are an error unless `rejectUnauthorized` is false. */
export function startTls(socket: Socket, options: ConnectionOptions, clock: PhaseClock): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({ ...options, socket })
    secure.once('secureConnect', () => {
      clock.tls = elapsed(clock)
      secure.removeListener('error', reject)
      resolve(secure)
    })
    secure.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy()
      reject(new Error(`TLS handshake failed: ${error.code ?? error.message}`))
    })
  })
}
