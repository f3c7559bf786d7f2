import { sql } from 'kysely'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { DELIVER_QUEUE } from '@svc/notifier'
import { startTestService, startTwilioServer, until, type TwilioRefusal, type TwilioRequest } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const callbackBase = 'https://product.example'
/** Set by a test: Twilio reports this final state of a message or call before it answers our request. */
let reportFirst: ((accepted: TwilioRequest) => Record<string, string> | undefined) | undefined
/** Set by a test: the answer to our request is lost after Twilio took the message. */
let answerLost: ReturnType<TwilioRefusal>
/** The outbox messages reported on that way, with the time the report was written. */
const reportedFirst = new Map<string, Date>()
const twilio = await startTwilioServer(t, undefined, async (accepted) => {
  const report = reportFirst?.(accepted)
  if (!report || !accepted.statusCallback) return
  const path = new URL(accepted.statusCallback).pathname
  await fromTwilio(path, report)
  const messageId = path.split('/').at(-1)!
  const row = await db.selectFrom('core.outbox').select('updatedAt').where('id', '=', messageId).executeTakeFirstOrThrow()
  reportedFirst.set(messageId, row.updatedAt)
  return accepted.kind === 'message' ? answerLost : undefined
})
const service = await startTestService(t, buildApp, {
  config: {
    notifier: {
      ...DEFAULT_NOTIFIER_CONFIG,
      retryDelaySeconds: 1,
      twilio: { accountSid: twilio.accountSid, authToken: twilio.authToken, from: twilio.from, apiUrl: twilio.url, callbackBase },
    },
  },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'phones', { manager: 'manager', ada: 'responder', viewer: 'viewer' })
const [manager, ada, viewer] = ['manager', 'ada', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
const adaPhone = '+4915112345678'
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

/** A callback as Twilio sends it: form-encoded, signed over the public URL and the fields. */
const fromTwilio = (path: string, params: Record<string, string>, signature = twilio.sign(`${callbackBase}${path}`, params)) =>
  app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    payload: new URLSearchParams(params).toString(),
  })

type Attempt = { channel: string; status: string; recipient: string | null; error: string | null }
const attempts = async (alertId: string): Promise<Attempt[]> =>
  (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().data

// Ada has verified her mobile for SMS and voice (contact-methods.test.ts covers verifying) and
// routes P1 to both.
for (const type of ['sms', 'voice']) {
  await db.insertInto('divinux.contactMethods').values({ userId: ada!.userId, type, address: adaPhone, verifiedAt: new Date() }).execute()
}
await call(ada!, 'PATCH', '/api/v1/users/me/notifications', {
  channels: { sms: { enabled: true, phoneNumber: adaPhone }, voice: { enabled: true, phoneNumber: adaPhone } },
  priorities: { P1: ['sms', 'voice'] },
})
const policy = (
  await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Ada',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] }],
  })
).json()
const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })).json()
// Every alert here is a matter of its own that must page: correlation is off, so none is grouped
// into an earlier alert's incident (decision 0019; correlation.test.ts covers grouping).
await call(manager!, 'PUT', `${base}/incident-rules`, { rules: [] })
const ingest = async (title: string) => {
  const response = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title, service: 'payments', priority: 'P1' }),
  })
  return response.json().alertId as string
}

let firstAlert = ''

t.test('a P1 page goes out as an SMS and a call through Twilio’s REST API', async (t) => {
  firstAlert = await ingest('Payments failing')
  const sms = await until('the SMS', () => twilio.received.find((r) => r.kind === 'message' && r.body?.includes('Payments failing')))
  t.equal(sms.to, adaPhone)
  t.match(sms.body, /^\[P1\] Payments failing \(payments\)\. Reply "ack \d{6}" to acknowledge, or open http/)
  t.match(sms.statusCallback, new RegExp(`^${callbackBase}/api/v1/twilio/status/[0-9a-f-]{36}$`), 'the callback names our message')
  const voice = await until('the call', () => twilio.received.find((r) => r.kind === 'call'))
  t.equal(voice.to, adaPhone)
  const sent = await until('both attempts sent', async () => {
    const found = await attempts(firstAlert)
    return found.length === 2 && found.every((attempt) => attempt.status === 'sent') && found
  })
  t.same(
    sent.map((attempt) => [attempt.channel, attempt.recipient]),
    [
      ['sms', adaPhone],
      ['voice', adaPhone],
    ],
  )
})

t.test('status callbacks mark delivery, and only Twilio’s signature is believed', async (t) => {
  const sms = twilio.received.find((r) => r.kind === 'message')!
  const callback = new URL(sms.statusCallback!).pathname
  const report = { MessageSid: sms.sid, MessageStatus: 'delivered', AccountSid: twilio.accountSid }
  t.equal((await fromTwilio(callback, report, 'forged')).statusCode, 403)
  t.equal(
    (
      await fromTwilio(
        callback,
        { ...report, MessageStatus: 'delivered' },
        twilio.sign(`${callbackBase}${callback}`, { ...report, MessageStatus: 'failed' }),
      )
    ).statusCode,
    403,
    'a signature over other fields',
  )
  t.equal(
    (await fromTwilio(callback, report, twilio.sign(`${callbackBase}/api/v1/twilio/status`, report))).statusCode,
    403,
    'a signature over another URL',
  )
  t.equal((await fromTwilio(callback, { ...report, MessageSid: 'SMother' })).statusCode, 204)
  t.equal(
    (await attempts(firstAlert)).find((attempt) => attempt.channel === 'sms')?.status,
    'sent',
    'a report on another SID changes nothing',
  )
  t.equal((await fromTwilio(callback, report)).statusCode, 204)
  t.equal((await attempts(firstAlert)).find((attempt) => attempt.channel === 'sms')?.status, 'delivered')

  const mail = await db
    .insertInto('core.outbox')
    .values({
      channel: 'email',
      kind: 'test',
      recipient: 'ada@phones.example',
      bodyText: 'hi',
      status: 'sent',
      provider: 'smtp',
      providerMessageId: '<1@mail>',
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  t.equal((await fromTwilio(`/api/v1/twilio/status/${mail.id}`, report)).statusCode, 204)
  t.match(
    await db
      .selectFrom('core.outbox')
      .select(['status', 'provider', 'providerMessageId'])
      .where('id', '=', mail.id)
      .executeTakeFirstOrThrow(),
    { status: 'sent', provider: 'smtp', providerMessageId: '<1@mail>' },
    'a report naming a message another provider carried changes nothing',
  )

  // A callback registered before callbacks named the message: found by Twilio's id.
  const callSid = twilio.received.find((r) => r.kind === 'call')!.sid
  t.equal((await fromTwilio('/api/v1/twilio/status', { CallSid: callSid, CallStatus: 'no-answer' })).statusCode, 204)
  t.match(
    (await attempts(firstAlert)).find((attempt) => attempt.channel === 'voice'),
    { status: 'failed', error: 'twilio: no-answer' },
  )
})

t.test('a report that arrives before the send is recorded stands', async (t) => {
  reportFirst = (accepted): Record<string, string> =>
    accepted.kind === 'message'
      ? { MessageSid: accepted.sid, MessageStatus: 'undelivered', ErrorCode: '30003', ErrorMessage: 'Unreachable destination handset' }
      : { CallSid: accepted.sid, CallStatus: 'completed' }
  t.teardown(() => {
    reportFirst = undefined
  })
  const alertId = await ingest('Queue backlog')
  // Settled: both were reported on, and the notifier recorded each send after its report.
  const rows = await until('both sends recorded after their reports', async () => {
    const found = await db
      .selectFrom('core.outbox')
      .innerJoin('divinux.notificationAttempts as n', 'n.outboxMessageId', 'core.outbox.id')
      .select(['core.outbox.id', 'core.outbox.updatedAt', 'core.outbox.providerMessageId', 'core.outbox.sentAt'])
      .where('n.alertId', '=', alertId)
      .execute()
    const recorded = (row: (typeof found)[number]) => reportedFirst.has(row.id) && row.updatedAt > reportedFirst.get(row.id)!
    return found.length === 2 && found.every(recorded) && found
  })
  const settled = await attempts(alertId)
  t.match(
    settled.find((attempt) => attempt.channel === 'sms'),
    {
      status: 'failed',
      error: 'twilio: undelivered (Twilio error 30003: Unreachable destination handset)',
    },
  )
  t.match(
    settled.find((attempt) => attempt.channel === 'voice'),
    { status: 'delivered' },
  )
  t.same(
    rows.map((row) => row.providerMessageId).sort(),
    twilio.received
      .slice(-2)
      .map((request) => request.sid)
      .sort(),
    'each keeps Twilio’s id',
  )
  t.ok(
    rows.every((row) => row.sentAt),
    'and the time it was sent',
  )
})

t.test('an SMS Twilio took and reported delivered is not sent again when our call failed on the way back', async (t) => {
  reportFirst = (accepted): Record<string, string> | undefined =>
    accepted.kind === 'message' ? { MessageSid: accepted.sid, MessageStatus: 'delivered' } : undefined
  answerLost = { status: 503, code: 20503, message: 'Service unavailable' }
  t.teardown(() => {
    reportFirst = undefined
    answerLost = undefined
  })
  const alertId = await ingest('Disk filling')
  const sms = await until('the SMS reported delivered', async () => {
    const found = (await attempts(alertId)).find((attempt) => attempt.channel === 'sms')
    return found?.status === 'delivered' && found
  })
  t.match(sms, { status: 'delivered' })
  // The delivery job is retried (our call failed) and ends when it finds the message settled.
  const messageId = await db
    .selectFrom('divinux.notificationAttempts')
    .select('outboxMessageId')
    .where('alertId', '=', alertId)
    .where('channel', '=', 'sms')
    .executeTakeFirstOrThrow()
  await until('the delivery job to end after its retry', async () => {
    const { rows } = await sql<{ state: string; retryCount: number }>`select state, retry_count as "retryCount" from pgboss.job
      where name = ${DELIVER_QUEUE} and data->>'messageId' = ${messageId.outboxMessageId}`.execute(db)
    return rows[0]?.state === 'completed' && rows[0].retryCount >= 1
  })
  t.equal(twilio.received.filter((request) => request.kind === 'message' && request.body?.includes('Disk filling')).length, 1, 'sent once')
  t.equal((await attempts(alertId)).find((attempt) => attempt.channel === 'sms')?.status, 'delivered', 'the report stands')
})

t.test('the call asks for 1; a reply "ack <code>" from her verified number acknowledges', async (t) => {
  const voice = twilio.received.find((r) => r.kind === 'call')!
  const path = new URL(voice.url!).pathname
  const twiml = await fromTwilio(path, { CallSid: voice.sid, AccountSid: twilio.accountSid })
  t.equal(twiml.statusCode, 200)
  t.match(twiml.headers['content-type'], /text\/xml/)
  t.match(
    twiml.body,
    new RegExp(
      `<Gather numDigits="1" action="${callbackBase}${path}/keypress" method="POST" timeout="10"><Say>This is an alert of priority P 1: Payments failing. Service: payments. Press 1 to acknowledge.</Say></Gather>`,
    ),
  )

  const code = /ack (\d{6})/.exec(twilio.received.find((r) => r.kind === 'message')!.body!)![1]!
  const stranger = await fromTwilio('/api/v1/twilio/sms', { From: '+4917000000000', Body: `ack ${code}` })
  t.match(stranger.body, /No page of yours has that code/, 'another number cannot acknowledge for her')
  const help = await fromTwilio('/api/v1/twilio/sms', { From: adaPhone, Body: 'hello' })
  t.match(help.body, /reply "ack" and the code/)
  const acked = await fromTwilio('/api/v1/twilio/sms', { From: adaPhone, Body: ` ACK ${code} ` })
  t.equal(acked.statusCode, 200)
  t.match(acked.body, /<Response><Message>Acknowledged: Payments failing<\/Message><\/Response>/)
  const alert = (await call(viewer!, 'GET', `${base}/alerts/${firstAlert}`)).json()
  t.match(alert, { status: 'acknowledged', acknowledgedBy: ada!.userId })
  t.match((await fromTwilio('/api/v1/twilio/sms', { From: adaPhone, Body: `ack ${code}` })).body, /No page of yours/, 'the code is spent')
})

t.test('pressing 1 on the call acknowledges; another key does not', async (t) => {
  const alertId = await ingest('Ledger drift')
  const sent = await until('the call', async () => {
    const found = await db
      .selectFrom('divinux.notificationAttempts')
      .select('outboxMessageId')
      .where('alertId', '=', alertId)
      .where('channel', '=', 'voice')
      .executeTakeFirst()
    return found?.outboxMessageId ?? undefined
  })
  const keypress = `/api/v1/twilio/voice/${sent}/keypress`
  t.match((await fromTwilio(keypress, { Digits: '2' })).body, /That key does nothing/)
  t.equal((await call(viewer!, 'GET', `${base}/alerts/${alertId}`)).json().status, 'open')
  t.match((await fromTwilio(keypress, { Digits: '1' })).body, /The alert is acknowledged/)
  t.equal((await call(viewer!, 'GET', `${base}/alerts/${alertId}`)).json().status, 'acknowledged')
  t.match((await fromTwilio(keypress, { Digits: '1' })).body, /already acknowledged/)
  const timeline = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/events`)).json().data
  t.match(
    timeline.find((event: { type: string }) => event.type === 'acknowledged'),
    { actorUserId: ada!.userId, data: { via: 'voice' } },
  )
})

t.test('a completed call is delivered; a verification call only speaks; unknown calls are 404', async (t) => {
  const callSid = twilio.received.find((r) => r.kind === 'call')!.sid
  t.equal((await fromTwilio('/api/v1/twilio/status', { CallSid: callSid, CallStatus: 'completed' })).statusCode, 204)
  t.equal(
    (await fromTwilio('/api/v1/twilio/status', { MessageSid: 'SMunknown', MessageStatus: 'queued' })).statusCode,
    204,
    'other states change nothing',
  )
  const added = await call(viewer!, 'POST', '/api/v1/users/me/contact-methods', { type: 'voice', address: '+4915199999999' })
  t.equal(added.statusCode, 201)
  const verification = await until('the verification message', () =>
    db
      .selectFrom('core.outbox')
      .select('id')
      .where('kind', '=', 'contact.verification')
      .where('recipient', '=', '+4915199999999')
      .executeTakeFirst(),
  )
  const twiml = await fromTwilio(`/api/v1/twilio/voice/${verification.id}`, {})
  t.match(twiml.body, /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Say>Your verification code is \d(, \d){5}\. Again: /)
  t.notMatch(twiml.body, /Gather/)
  t.equal((await fromTwilio('/api/v1/twilio/voice/00000000-0000-4000-8000-000000000000', {})).statusCode, 404)
  t.equal((await fromTwilio('/api/v1/twilio/voice/00000000-0000-4000-8000-000000000000/keypress', { Digits: '1' })).statusCode, 404)
})
