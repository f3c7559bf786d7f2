import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { startMetricsServer } from '@svc/metrics'

export interface ServeOptions {
  host: string
  /** METRICS_PORT: `GET /metrics` is served there; unset: no metrics listener. */
  metricsPort?: number
  afterClose?: () => Promise<void>
  delayMs?: number
}

/**
 * Listens, and on SIGTERM/SIGINT stops accepting connections, lets requests in flight
 * finish, then runs `onClose` hooks (job workers stop, the database closes). A second
 * signal or a stuck shutdown past `delayMs` exits hard.
 */
export async function serve(apps: Array<{ app: FastifyInstance; port: number }>, options: ServeOptions): Promise<void> {
  const metrics = options.metricsPort === undefined ? undefined : await startMetricsServer(options.metricsPort, options.host)
  closeWithGrace({ delay: options.delayMs ?? 15_000 }, async ({ signal, err }) => {
    const log = apps[0]?.app.log
    if (err) log?.error({ err }, 'shutting down after an uncaught error')
    else log?.info({ signal }, 'shutting down')
    await Promise.all(apps.map(({ app }) => app.close()))
    await metrics?.close()
    await options.afterClose?.()
  })
  for (const { app, port } of apps) await app.listen({ port, host: options.host })
  if (metrics) apps[0]?.app.log.info(`metrics on :${metrics.port}/metrics`)
}

/** Configuration errors stop the process with one clear line, not a stack trace. */
export function exitOnConfigurationError<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    console.error((error as Error).message)
    process.exit(1)
  }
}
