import type { OutboundPolicy } from '@svc/outbound'
import { evaluate } from './assertions.js'
import { elapsed, openSocket, resolveTarget, type PhaseClock } from './connect.js'
import type { TcpRequest } from './definitions.js'
import type { Observation } from './observation.js'

/** One TCP attempt: the port accepts a connection within the timeout; connect time is its response time. */
export async function runTcp(spec: TcpRequest, timeoutMs: number, policy: OutboundPolicy): Promise<Observation> {
  const clock: PhaseClock = { start: performance.now() }
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs)
  })
  const connecting = resolveTarget(spec.host, policy, clock).then((address) => openSocket(address, spec.port, clock))
  try {
    const socket = await Promise.race([connecting, timeout])
    socket.destroy()
    const total = elapsed(clock)
    return {
      timings: { dns: clock.dns, connect: clock.connect, total },
      assertions: evaluate(spec.assertions ?? [], { responseTimeMs: total }),
    }
  } catch (error) {
    // A connection that completes after the timeout is closed, not leaked.
    connecting.then(
      (socket) => socket.destroy(),
      () => undefined,
    )
    return { timings: { dns: clock.dns, connect: clock.connect, total: elapsed(clock) }, assertions: [], error: (error as Error).message }
  } finally {
    clearTimeout(timer)
  }
}
