import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { TestContext } from './teardown.js'

export interface TlsFront {
  /** `127.0.0.1:<port>`: what a client that insists on https is given as the host. */
  host: string
  /** The front's self-signed certificate, for the client to trust. */
  ca: string
}

/**
 * An https listener on loopback in front of a service, for clients that only speak https (the
 * PagerDuty SDK builds `https://<server>/v2/enqueue`): each request is handed to the app as it
 * came, headers and bytes, and its answer returned as it is.
 */
export async function startTlsFront(t: TestContext, app: FastifyInstance): Promise<TlsFront> {
  // selfsigned is loaded here, not at the top: most test processes never start a TLS front.
  const { generate } = await import('selfsigned')
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  })
  const server = createServer({ key: pems.private, cert: pems.cert }, (request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      app
        .inject({
          method: request.method as 'POST',
          url: request.url ?? '/',
          headers: request.headers,
          payload: Buffer.concat(chunks),
          remoteAddress: request.socket.remoteAddress,
        })
        .then((answer) => {
          response.writeHead(answer.statusCode, answer.headers as Record<string, string>)
          response.end(answer.rawPayload)
        })
        .catch((error: unknown) => {
          response.writeHead(502)
          response.end(String(error))
        })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { host: `127.0.0.1:${(server.address() as AddressInfo).port}`, ca: pems.cert }
}
