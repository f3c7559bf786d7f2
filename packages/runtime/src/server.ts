import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'

/**
 * Listens, and on SIGTERM/SIGINT stops accepting connections, lets requests in flight
 * finish, then runs `onClose` hooks (job workers stop, the database closes). A second
 * signal or a stuck shutdown past `delayMs` exits hard.
 */
export async function serve(
  apps: Array<{ app: FastifyInstance; port: number }>,
  host: string,
  afterClose: () => Promise<void> = async () => {},
  delayMs = 15_000,
): Promise<void> {
  closeWithGrace({ delay: delayMs }, async ({ signal, err }) => {
    const log = apps[0]?.app.log
    if (err) log?.error({ err }, 'shutting down after an uncaught error')
    else log?.info({ signal }, 'shutting down')
    await Promise.all(apps.map(({ app }) => app.close()))
    await afterClose()
  })
  for (const { app, port } of apps) await app.listen({ port, host })
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
