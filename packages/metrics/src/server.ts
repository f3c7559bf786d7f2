import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { collectProcessMetrics, registry } from './registry.js'

/**
 * `GET /metrics` in Prometheus's text format on a port of its own (METRICS_PORT), so the
 * scrape never shares the public listener, its rate limits or its authentication.
 */
export async function startMetricsServer(port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  collectProcessMetrics()
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n')
      return
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${error.message}\n`),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
