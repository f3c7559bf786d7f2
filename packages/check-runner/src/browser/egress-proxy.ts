import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { OutboundPolicy } from '@svc/outbound'
import { openSocket, resolveTarget } from '../connect.js'

/** A request of the browser's the proxy refused or could not carry. */
export interface RefusedRequest {
  url: string
  reason: string
}

/**
 * The only way out for a browser check's Chromium (launched with this as its proxy, loopback not
 * bypassed): each connection's host is resolved here and refused under the outbound rule as an
 * HTTP check's is, so a page cannot reach the runner's network by a link, a redirect or a script.
 * Written here because the proxies on npm forward anywhere: the rule must decide each connection
 * at the moment it is made, against every address the name has (`resolveTarget`).
 */
export async function startEgressProxy(policy: OutboundPolicy) {
  const refused: RefusedRequest[] = []
  const sockets = new Set<Socket>()
  const clock = () => ({ start: performance.now() })

  async function forward(request: IncomingMessage, response: ServerResponse) {
    let target: URL
    try {
      target = new URL(request.url ?? '')
      if (target.protocol !== 'http:') throw new Error('only http:// is proxied without CONNECT')
    } catch (error) {
      response.writeHead(400).end((error as Error).message)
      return
    }
    try {
      const address = await resolveTarget(target.hostname, policy, clock())
      const upstream = httpRequest(
        {
          host: address,
          port: Number(target.port) || 80,
          method: request.method,
          path: `${target.pathname}${target.search}`,
          headers: { ...request.headers, host: target.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(response)
        },
      )
      upstream.on('error', (error) => {
        refused.push({ url: target.href, reason: error.message })
        if (!response.headersSent) response.writeHead(502)
        response.end()
      })
      request.pipe(upstream)
    } catch (error) {
      refused.push({ url: target.href, reason: (error as Error).message })
      // Closed without an answer: the page sees a network error, as for an address it cannot reach.
      response.socket?.destroy()
    }
  }

  async function tunnel(request: IncomingMessage, client: Socket, head: Buffer) {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => client.destroy())
    const [host = '', port = '443'] = (request.url ?? '').split(/:(?=\d+$)/)
    try {
      const address = await resolveTarget(host, policy, clock())
      const upstream = await openSocket(address, Number(port), clock())
      sockets.add(upstream)
      upstream.on('close', () => sockets.delete(upstream))
      upstream.on('error', () => client.destroy())
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    } catch (error) {
      refused.push({ url: `https://${request.url ?? ''}/`, reason: (error as Error).message })
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n')
    }
  }

  const server = createServer((request, response) => void forward(request, response))
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => void tunnel(request, client, head))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused,
    async close(): Promise<void> {
      for (const socket of sockets) socket.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
