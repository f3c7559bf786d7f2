// `pnpm outbox [--status held|pending|sent|delivered|failed|captured] [--limit N]`: the newest
// outbound messages, with their text. It asks the running `pnpm start` (its development outbox,
// on PLATFORM_PORT), never the embedded database's files, which belong to that one process.
// With DATABASE_URL set it reads that PostgreSQL database instead, running system or not.
import { parseArgs } from 'node:util'
import { readEnvironment } from '@svc/config'
import { openDatabase } from '@svc/db'
import { latestOutboxRows } from '@svc/notifier'
import { DEV_OUTBOX_PATH, exitOnConfigurationError, outboxMessageOf, outboxStatuses } from '@svc/runtime'
import { environmentOfRunningSystem } from './dev-system.js'

type Status = (typeof outboxStatuses)[number]
interface Message {
  id: string
  createdAt: string
  status: string
  channel: string
  kind: string
  recipient: string
  subject: string | null
  text: string
  note: string | null
}

const { values } = parseArgs({ options: { status: { type: 'string' }, limit: { type: 'string', default: '20' } } })
const status = values.status as Status | undefined
if (status !== undefined && !outboxStatuses.includes(status)) {
  console.error(`--status must be one of ${outboxStatuses.join(', ')}`)
  process.exit(2)
}
const limit = Number(values.limit)
if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
  console.error('--limit must be a whole number from 1 to 1000')
  process.exit(2)
}
const env = environmentOfRunningSystem(exitOnConfigurationError(() => readEnvironment()))

async function fromDatabase(databaseUrl: string): Promise<Message[]> {
  const database = await openDatabase({ databaseUrl })
  try {
    return (await latestOutboxRows(database.db, { status, limit })).map(outboxMessageOf)
  } finally {
    await database.close()
  }
}

async function fromRunningSystem(): Promise<Message[]> {
  const url = new URL(`http://127.0.0.1:${env.PLATFORM_PORT}${DEV_OUTBOX_PATH}.json`)
  url.searchParams.set('limit', String(limit))
  if (status) url.searchParams.set('status', status)
  const response = await fetch(url).catch(() => undefined)
  if (!response?.ok) {
    console.error(
      `no development system answers on port ${env.PLATFORM_PORT} (PLATFORM_PORT): start it with \`pnpm start\`, or set DATABASE_URL to read a PostgreSQL database`,
    )
    process.exit(1)
  }
  return ((await response.json()) as { data: Message[] }).data
}

const messages = env.DATABASE_URL ? await fromDatabase(env.DATABASE_URL) : await fromRunningSystem()
if (messages.length === 0) console.log('the outbox is empty')
for (const message of messages) {
  console.log(
    `${message.createdAt}  ${message.status.padEnd(8)}  ${message.channel} ${message.kind} → ${message.recipient}  (${message.id})`,
  )
  if (message.subject) console.log(`  Subject: ${message.subject}`)
  if (message.note) console.log(`  Note: ${message.note}`)
  console.log(message.text.replace(/^/gm, '  | '))
  console.log()
}
