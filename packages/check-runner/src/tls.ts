import type { OutboundPolicy } from '@svc/outbound'
import { isIP } from 'node:net'
import { elapsed, openSocket, resolveTarget, startTls, type PhaseClock } from './connect.js'
import type { TlsRequest } from './definitions.js'
import type { Observation } from './observation.js'

const DAY_MS = 86_400_000

/**
 * One TLS attempt: the handshake succeeds with a chain the system trusts (unless
 * `allowUntrusted`), and the leaf certificate is valid for at least `daysBeforeExpiry` more days.
 */
export async function runTls(spec: TlsRequest, timeoutMs: number, policy: OutboundPolicy, now = () => Date.now()): Promise<Observation> {
  const clock: PhaseClock = { start: performance.now() }
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs)
  })
  const port = spec.port ?? 443
  const servername = spec.servername ?? (isIP(spec.host) ? undefined : spec.host)
  const handshake = resolveTarget(spec.host, policy, clock)
    .then((address) => openSocket(address, port, clock))
    .then((socket) => startTls(socket, { servername, rejectUnauthorized: !spec.allowUntrusted }, clock))
  try {
    const secure = await Promise.race([handshake, timeout])
    const certificate = secure.getPeerCertificate()
    secure.destroy()
    const total = elapsed(clock)
    const validTo = new Date(certificate.valid_to)
    const daysLeft = Math.floor((validTo.getTime() - now()) / DAY_MS)
    const wanted = spec.daysBeforeExpiry ?? 14
    const details = {
      validFrom: new Date(certificate.valid_from).toISOString(),
      validTo: validTo.toISOString(),
      daysLeft,
      subject: certificate.subject?.CN ?? null,
      issuer: certificate.issuer?.CN ?? null,
    }
    const error =
      daysLeft < 0
        ? 'the certificate has expired'
        : daysLeft < wanted
          ? `the certificate expires in ${daysLeft} days (fewer than ${wanted})`
          : undefined
    return { timings: { dns: clock.dns, connect: clock.connect, tls: clock.tls, total }, assertions: [], error, details }
  } catch (error) {
    handshake.then(
      (socket) => socket.destroy(),
      () => undefined,
    )
    return { timings: { dns: clock.dns, connect: clock.connect, total: elapsed(clock) }, assertions: [], error: (error as Error).message }
  } finally {
    clearTimeout(timer)
  }
}
