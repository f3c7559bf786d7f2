import pg from 'pg'
import { CHANGES_CHANNEL, type ChangeNotices } from './change-notices.js'
import { DUE_CHANNEL, type DueNotices } from './due-notices.js'

const FIRST_RETRY_MS = 500
const LONGEST_RETRY_MS = 10_000

/**
 * A PostgreSQL connection of its own that listens for change notices and due notices all the
 * time, so that other replicas' changes are heard even while this process's pool has no
 * connection open. While it is down, notices may be missed: both are suspended (nothing is
 * served from what change notices keep right; sleepers fall back on their longest sleep) until it
 * listens again, retrying with a growing pause.
 */
export function listenForChanges(connectionString: string, notices: ChangeNotices, dues: DueNotices, onError: (error: Error) => void) {
  let current: pg.Client | undefined
  let retry: NodeJS.Timeout | undefined
  let pause = FIRST_RETRY_MS
  let stopped = false

  function lost(client: pg.Client): void {
    if (current !== client) return
    current = undefined
    notices.suspend()
    dues.suspend()
    client.end().catch(() => {})
    if (stopped) return
    retry = setTimeout(listen, pause)
    retry.unref()
    pause = Math.min(pause * 2, LONGEST_RETRY_MS)
  }

  async function listen(): Promise<void> {
    retry = undefined
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 })
    current = client
    client.on('notification', (notification) => {
      notices.hear(notification)
      dues.hear(notification)
    })
    client.on('error', (error) => {
      onError(error)
      lost(client)
    })
    client.on('end', () => lost(client))
    try {
      await client.connect()
      await client.query(`listen ${CHANGES_CHANNEL}`)
      await client.query(`listen ${DUE_CHANNEL}`)
    } catch (error) {
      if (current === client) onError(error as Error)
      lost(client)
      return
    }
    if (current !== client) return
    pause = FIRST_RETRY_MS
    notices.resume()
    dues.resume()
  }

  void listen()
  return {
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(retry)
      const client = current
      current = undefined
      notices.suspend()
      dues.suspend()
      await client?.end().catch(() => {})
    },
  }
}
