import { createSocket } from 'node:dgram'
import * as packet from 'dns-packet'
import type { TestContext } from '../teardown.js'

export interface DnsTestServer {
  /** `127.0.0.1:<port>`, for a resolver's servers (DNS_SERVERS). */
  address: string
  /** TXT records by name (lower case); change them between questions. Unknown names answer NXDOMAIN. */
  txt: Map<string, string[]>
  /** The names asked about, in order. */
  asked: string[]
}

/**
 * A DNS server on loopback (UDP) that answers TXT questions from a map: what the domain
 * verification of status pages reads with node:dns, without the internet.
 */
export async function startDnsServer(t: TestContext): Promise<DnsTestServer> {
  const txt = new Map<string, string[]>()
  const asked: string[] = []
  const socket = createSocket('udp4')
  socket.on('message', (message, remote) => {
    const query = packet.decode(message)
    const question = query.questions?.[0]
    if (!question) return
    const name = question.name.toLowerCase()
    asked.push(name)
    const values = question.type === 'TXT' ? txt.get(name) : undefined
    const answer = packet.encode({
      id: query.id,
      type: 'response',
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (values || txt.has(name) ? 0 : 3), // 3: NXDOMAIN
      questions: [question],
      answers: (values ?? []).map((value) => ({ type: 'TXT' as const, name: question.name, ttl: 5, class: 'IN' as const, data: value })),
    })
    socket.send(answer, remote.port, remote.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => socket.close(() => resolve())))
  return { address: `127.0.0.1:${socket.address().port}`, txt, asked }
}
