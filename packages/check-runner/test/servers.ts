import { createSocket } from 'node:dgram'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { createServer as createTcpServer, type AddressInfo } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import dnsPacket from 'dns-packet'
import { generate } from 'selfsigned'

// Loopback servers the runner is tested against: real sockets, real protocols.

type Teardown = (fn: () => unknown) => void
type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

export async function startHttp(teardown: Teardown, handler: Handler): Promise<string> {
  const server = createHttpServer((request, response) => void readBody(request).then((body) => handler(request, body, response)))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  teardown(() => new Promise((resolve) => server.close(resolve)))
  server.closeIdleConnections()
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export async function selfSignedCertificate(notAfterDate: Date) {
  return generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    notBeforeDate: new Date(Date.now() - 86_400_000),
    notAfterDate,
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  })
}

export async function startHttps(teardown: Teardown, handler: Handler): Promise<string> {
  const pems = await selfSignedCertificate(new Date(Date.now() + 90 * 86_400_000))
  const server = createHttpsServer(
    { key: pems.private, cert: pems.cert },
    (request, response) => void readBody(request).then((body) => handler(request, body, response)),
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  teardown(() => new Promise((resolve) => server.close(resolve)))
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A TCP port that accepts and closes connections. */
export async function startTcp(teardown: Teardown): Promise<number> {
  const server = createTcpServer((socket) => socket.end())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  teardown(() => new Promise((resolve) => server.close(resolve)))
  return (server.address() as AddressInfo).port
}

/** A TLS server presenting a self-signed certificate valid until `notAfter`. */
export async function startTls(teardown: Teardown, notAfter: Date): Promise<number> {
  const pems = await selfSignedCertificate(notAfter)
  const server = createTlsServer({ key: pems.private, cert: pems.cert }, (socket) => socket.end())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  teardown(() => new Promise((resolve) => server.close(resolve)))
  return (server.address() as AddressInfo).port
}

export type DnsZone = Record<string, Array<{ type: 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME'; data: unknown }>>

/** A UDP DNS server answering from a zone (names in lower case); unknown names get NXDOMAIN. */
export async function startDns(teardown: Teardown, zone: DnsZone): Promise<string> {
  const socket = createSocket('udp4')
  socket.on('message', (message, remote) => {
    const query = dnsPacket.decode(message)
    const question = query.questions?.[0]
    const records = (question ? zone[question.name.toLowerCase()] : undefined) ?? []
    const answers = records
      .filter((record) => record.type === question?.type)
      .map((record) => ({ type: record.type, name: question!.name, ttl: 60, class: 'IN' as const, data: record.data }))
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (records.length === 0 ? 3 : 0),
      questions: query.questions,
      answers: answers as dnsPacket.Answer[],
    })
    socket.send(response, remote.port, remote.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  teardown(() => new Promise<void>((resolve) => socket.close(() => resolve())))
  return `127.0.0.1:${socket.address().port}`
}
