// `pnpm outbox [--status held|pending|sent|failed] [--limit N]`: the newest outbound messages, with
// their text, from DATABASE_URL or the embedded database under DATA_DIR (stop `pnpm start` first:
// the embedded database has one process at a time). Without SMTP_URL, e-mails wait here as `held`.
import { parseArgs } from 'node:util'
import { readEnvironment } from '@svc/config'
import { openDatabase } from '@svc/db'
import { latestOutboxRows, type OutboxStatus } from '@svc/notifier'
import { exitOnConfigurationError } from '@svc/runtime'

const statuses: OutboxStatus[] = ['pending', 'sent', 'held', 'failed']
const { values } = parseArgs({ options: { status: { type: 'string' }, limit: { type: 'string', default: '20' } } })
const status = values.status as OutboxStatus | undefined
if (status !== undefined && !statuses.includes(status)) {
  console.error(`--status must be one of ${statuses.join(', ')}`)
  process.exit(2)
}
const limit = Number(values.limit)
if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
  console.error('--limit must be a whole number from 1 to 1000')
  process.exit(2)
}

const env = exitOnConfigurationError(() => readEnvironment())
const database = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR })
try {
  const rows = await latestOutboxRows(database.db, { status, limit })
  if (rows.length === 0) console.log('the outbox is empty')
  for (const row of rows) {
    console.log(`${row.createdAt.toISOString()}  ${row.status.padEnd(7)}  ${row.channel} ${row.kind} → ${row.recipient}  (${row.id})`)
    if (row.subject) console.log(`  Subject: ${row.subject}`)
    if (row.lastError) console.log(`  Note: ${row.lastError}`)
    console.log(row.bodyText.replace(/^/gm, '  | '))
    console.log()
  }
} finally {
  await database.close()
}
