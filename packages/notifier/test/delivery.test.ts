import { createServer } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import Fastify from 'fastify'
import { sql } from 'kysely'
import { DEFAULT_NOTIFIER_CONFIG, type NotifierConfig } from '@svc/config'
import { migrateToLatest, openDatabase } from '@svc/db'
import { createJobQueue, stopJobQueue } from '@svc/jobs'
import { createNotifier, DELIVER_QUEUE, latestOutboxRows, type OutboundEmail } from '@svc/notifier'
import { createTestDatabase, startSmtpServer, startWebhookReceiver, until, type RecipientReply, type TestContext } from '@svc/testkit'

const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
t.teardown(() => database.close())
await migrateToLatest(database.db)
const jobs = createJobQueue({ sql: database.sql, supervise: false, onError: (error) => t.fail(`job queue: ${error.message}`) })
await jobs.start()
t.teardown(() => stopJobQueue(jobs))
const { db } = database
const log = Fastify({ logger: false }).log

/** A notifier of its own per test, against a fresh loopback SMTP server unless told `smtpUrl`. */
async function notifierFor(t: TestContext, options: { replyTo?: RecipientReply; config?: Partial<NotifierConfig> } = {}) {
  const smtp = await startSmtpServer(t, options.replyTo)
  const config = {
    ...DEFAULT_NOTIFIER_CONFIG,
    smtpUrl: smtp.url,
    from: 'Incidents <incidents@example.com>',
    retryDelaySeconds: 1,
    ...options.config,
  }
  const notifier = createNotifier({ jobs, database, config, log })
  await notifier.start()
  t.teardown(() => notifier.stop())
  return { notifier, smtp }
}

const email = (to: string): OutboundEmail => ({
  organizationId: null,
  kind: 'test.greeting',
  to,
  subject: 'Hello from the outbox',
  text: 'A plain text body.',
  html: '<p>A plain text body.</p>',
})

async function queue(notifier: ReturnType<typeof createNotifier>, message: OutboundEmail) {
  const queued = await db.transaction().execute((trx) => notifier.queueEmail(trx, message))
  notifier.wake()
  return queued
}

/** The outbox row once no delivery is left to try (the test's own timeout bounds the wait). */
async function settled(messageId: string) {
  for (;;) {
    const row = await db.selectFrom('core.outbox').selectAll().where('id', '=', messageId).executeTakeFirstOrThrow()
    if (row.status !== 'pending') return row
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const jobsFor = async (messageId: string) =>
  (await sql<{ id: string }>`select id from pgboss.job where name = ${DELIVER_QUEUE} and data ->> 'messageId' = ${messageId}`.execute(db))
    .rows

t.test('an e-mail is written to the outbox and delivered over SMTP by a job', async (t) => {
  const { notifier, smtp } = await notifierFor(t)
  const queued = await queue(notifier, email('ada@example.com'))
  t.equal(queued.status, 'pending')
  t.equal((await jobsFor(queued.messageId)).length, 1, 'one delivery job, committed with the message')
  const row = await settled(queued.messageId)
  t.match(row, {
    status: 'sent',
    channel: 'email',
    kind: 'test.greeting',
    recipient: 'ada@example.com',
    attempts: 1,
    provider: 'smtp',
    lastError: null,
  })
  t.ok(row.sentAt, 'stamped when sent')
  t.match(row.providerMessageId, /^<[^@]+@[^>]+>$/, "the server's Message-ID")
  t.equal(smtp.received.length, 1)
  t.match(smtp.received[0], {
    envelopeFrom: 'incidents@example.com',
    envelopeTo: ['ada@example.com'],
    from: { name: 'Incidents', address: 'incidents@example.com' },
    subject: 'Hello from the outbox',
    text: 'A plain text body.',
    html: '<p>A plain text body.</p>',
  })
})

t.test('a transaction that rolls back leaves neither message nor job', async (t) => {
  const { notifier, smtp } = await notifierFor(t)
  let messageId = ''
  await t.rejects(
    db.transaction().execute(async (trx) => {
      messageId = (await notifier.queueEmail(trx, email('rolled-back@example.com'))).messageId
      throw new Error('the change failed')
    }),
    { message: 'the change failed' },
  )
  t.ok(messageId)
  t.equal(await db.selectFrom('core.outbox').select('id').where('id', '=', messageId).executeTakeFirst(), undefined)
  t.equal((await jobsFor(messageId)).length, 0)
  t.equal(smtp.attempts.size, 0)
})

t.test('a temporary refusal (4xx) is retried until the server takes the message', async (t) => {
  const { notifier, smtp } = await notifierFor(t, {
    replyTo: (_address, attempt) => (attempt === 1 ? { code: 451, message: 'greylisted, try again later' } : undefined),
  })
  const row = await settled((await queue(notifier, email('grey@example.com'))).messageId)
  t.match(row, { status: 'sent', attempts: 2, lastError: null })
  t.equal(smtp.attempts.get('grey@example.com'), 2)
  t.equal(smtp.received.length, 1)
})

t.test('a permanent refusal (5xx) fails at once, with the reason kept', async (t) => {
  const { notifier, smtp } = await notifierFor(t, { replyTo: () => ({ code: 550, message: 'no such mailbox' }) })
  const row = await settled((await queue(notifier, email('nobody@example.com'))).messageId)
  t.match(row, { status: 'failed', attempts: 1, provider: 'smtp', sentAt: null })
  t.match(row.lastError, /550.*no such mailbox/)
  t.equal(smtp.attempts.get('nobody@example.com'), 1, 'not tried again')
})

t.test('a refusal that lasts fails once the retries are spent', async (t) => {
  const { notifier, smtp } = await notifierFor(t, { replyTo: () => ({ code: 452, message: 'mailbox full' }), config: { retryLimit: 1 } })
  const row = await settled((await queue(notifier, email('full@example.com'))).messageId)
  t.match(row, { status: 'failed', attempts: 2 })
  t.match(row.lastError, /452.*mailbox full/)
  t.equal(smtp.attempts.get('full@example.com'), 2)
})

t.test('a server that cannot be reached counts as temporary', async (t) => {
  const closed = net.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as net.AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const { notifier } = await notifierFor(t, { config: { smtpUrl: `smtp://127.0.0.1:${port}`, retryLimit: 1 } })
  const row = await settled((await queue(notifier, email('unreachable@example.com'))).messageId)
  t.match(row, { status: 'failed', attempts: 2 })
  t.match(row.lastError, /ECONNREFUSED|connect/i)
})

t.test('without SMTP_URL an e-mail is held in the outbox, readable, and no job is queued', async (t) => {
  const notifier = createNotifier({ jobs, database, config: { ...DEFAULT_NOTIFIER_CONFIG }, log })
  await notifier.start()
  t.teardown(() => notifier.stop())
  const queued = await queue(notifier, { ...email('held@example.com'), html: undefined })
  t.equal(queued.status, 'held')
  t.equal((await jobsFor(queued.messageId)).length, 0)
  const [latest] = await latestOutboxRows(db, { status: 'held', limit: 1 })
  t.match(latest, {
    id: queued.messageId,
    status: 'held',
    recipient: 'held@example.com',
    subject: 'Hello from the outbox',
    bodyText: 'A plain text body.',
    attempts: 0,
  })
  t.match(latest?.lastError, /SMTP_URL/)
})

t.test('webhook messages go out in order per receiver, on a queue of their own that never delays e-mail', async (t) => {
  // A receiver that answers its first request 503, and 40 receivers (two batches) that take two seconds each.
  const ordered = await startWebhookReceiver(t, (_path, attempt) => (attempt === 1 ? { status: 503, body: 'busy' } : { status: 204 }))
  const finished: string[] = []
  const slow = createServer((request, response) => {
    setTimeout(() => {
      finished.push(request.url ?? '')
      response.writeHead(204).end()
    }, 2_000)
  })
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((done) => slow.close(done)))
  const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`
  const secret = `whsec_${Buffer.from('a-secret-of-twenty-four!').toString('base64')}`
  const smtp = await startSmtpServer(t)
  const notifier = createNotifier({
    jobs,
    database,
    log,
    config: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, retryDelaySeconds: 1 },
    webhooks: {
      resolve: async (recipient) =>
        recipient === 'hook:ordered' ? { url: `${ordered.url}/ordered`, secret } : { url: `${slowUrl}/${recipient}`, secret },
      policy: { allowPrivateTargets: true },
    },
  })
  await notifier.start()
  t.teardown(() => notifier.stop())
  const send = async (to: string, text: string, channel: 'webhook' | 'email' = 'webhook') => {
    const queued = await db
      .transaction()
      .execute((trx) => notifier.queueMessage(trx, { organizationId: null, channel, kind: 'test.order', to, subject: 'Order', text }))
    notifier.wake()
    return queued.messageId
  }

  const created = await send('hook:ordered', '{"type":"incident.created"}')
  const resolved = await send('hook:ordered', '{"type":"incident.resolved"}')
  await Promise.all([settled(created), settled(resolved)])
  t.same(
    ordered.received.map((request) => (request.body as { type: string }).type),
    ['incident.created', 'incident.created', 'incident.resolved'],
    'the second waited for the first, retried after a 503, before it went',
  )

  for (let index = 0; index < 40; index++) await send(`slow-${index}`, '{"type":"incident.updated"}')
  const mail = await send('reader@example.com', 'Status: all good', 'email')
  t.match(await settled(mail), { status: 'sent' })
  t.equal(finished.length, 0, 'the e-mail went before any slow webhook receiver had answered')
})

t.test(
  'a message whose sender died while sending (its claim ran out) is sent again within seconds, with the same Message-ID',
  async (t) => {
    const { notifier, smtp } = await notifierFor(t)
    const id = '5f3c1e0a-0000-4000-8000-00000000dead'
    // Claimed by a sender that was killed part way: the row stayed pending, its claim ran out, no job is left.
    await db
      .insertInto('core.outbox')
      .values({
        id,
        organizationId: null,
        channel: 'email',
        kind: 'test.orphan',
        recipient: 'orphan@example.com',
        subject: 'Paged',
        bodyText: 'You are paged.',
        status: 'pending',
        attempts: 1,
        claimedUntil: new Date(Date.now() - 1_000),
      })
      .execute()
    t.ok(notifier)
    const row = await settled(id)
    t.match(row, { status: 'sent', attempts: 2, claimedUntil: null })
    const mail = smtp.received.find((received) => received.envelopeTo.includes('orphan@example.com'))!
    t.equal(mail.messageId, `<${id}@example.com>`, 'the Message-ID is made from the outbox id, so a repeat is recognisable')
  },
)

t.test('a job delivered twice while its message is claimed does nothing', async (t) => {
  const { notifier } = await notifierFor(t)
  const queued = await db.transaction().execute((trx) => notifier.queueEmail(trx, email('claimed@example.com')))
  // Another sender holds the claim right now.
  await db
    .updateTable('core.outbox')
    .set({ claimedUntil: new Date(Date.now() + 60_000) })
    .where('id', '=', queued.messageId)
    .execute()
  notifier.wake()
  await until('the delivery job to be worked', async () => {
    const { rows } = await sql<{ state: string }>`
      select state from pgboss.job where name = ${DELIVER_QUEUE} and data ->> 'messageId' = ${queued.messageId}`.execute(db)
    return rows.length > 0 && rows.every((row) => row.state === 'completed')
  })
  const row = await db.selectFrom('core.outbox').select(['status', 'attempts']).where('id', '=', queued.messageId).executeTakeFirstOrThrow()
  t.match(row, { status: 'pending', attempts: 0 }, 'not attempted while the claim holds')
  await db
    .updateTable('core.outbox')
    .set({ claimedUntil: new Date(Date.now() - 1_000) })
    .where('id', '=', queued.messageId)
    .execute()
  t.match(await settled(queued.messageId), { status: 'sent' }, 'sent once the claim ran out')
})

t.test('the development catcher captures what no provider carries: a line to read, nothing sent, status captured', async (t) => {
  const lines: string[] = []
  const config = { ...DEFAULT_NOTIFIER_CONFIG, retryDelaySeconds: 1, catchMessages: true, capturedAt: 'http://localhost:3004/dev/outbox' }
  const notifier = createNotifier({ jobs, database, config, log, printCaptured: (line) => lines.push(line) })
  await notifier.start()
  t.teardown(() => notifier.stop())
  t.equal(notifier.heldReason('email'), undefined, 'nothing is held')
  t.equal(notifier.heldReason('sms'), undefined)
  const queued = await queue(notifier, { ...email('grace@example.com'), text: 'Your code is 123456' })
  t.equal(queued.status, 'pending')
  const sms = await db
    .transaction()
    .execute((trx) =>
      notifier.queueMessage(trx, { organizationId: null, channel: 'sms', kind: 'test.code', to: '+15550100', text: 'Code 654321' }),
    )
  notifier.wake()
  t.match(await settled(queued.messageId), { status: 'captured', provider: 'catcher', lastError: null })
  t.match(await settled(sms.messageId), { status: 'captured', provider: 'catcher' })
  t.same(lines.sort(), [
    `captured SMS to +15550100 (${sms.messageId}): http://localhost:3004/dev/outbox`,
    `captured e-mail to grace@example.com “Hello from the outbox” (${queued.messageId}): http://localhost:3004/dev/outbox`,
  ])
  t.notMatch(lines.join('\n'), /123456|654321/, 'a body (a code, a link) is never printed')
  const [newest] = await latestOutboxRows(db, { status: 'captured', limit: 1 })
  t.ok(newest, 'the outbox lists captured messages')
})
