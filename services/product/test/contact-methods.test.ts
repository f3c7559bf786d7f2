import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, startTwilioServer, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'

const smtp = await startSmtpServer(t)
const twilio = await startTwilioServer(t, (to) =>
  to === '+15005550001' ? { status: 400, code: 21211, message: "The 'To' number is not valid" } : undefined,
)
const service = await startTestService(t, buildApp, {
  config: {
    notifier: {
      ...DEFAULT_NOTIFIER_CONFIG,
      smtpUrl: smtp.url,
      retryDelaySeconds: 1,
      twilio: {
        accountSid: twilio.accountSid,
        authToken: twilio.authToken,
        from: twilio.from,
        apiUrl: twilio.url,
        callbackBase: 'https://product.example',
      },
    },
  },
})
const { app } = service
const ada = await service.signIn('ada@contacts.example')
const bo = await service.signIn('bo@contacts.example')
const methods = '/api/v1/users/me/contact-methods'
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const codeIn = (text: string) => /(\d{6})/.exec(text)?.[1] ?? /(\d(?:, \d){5})/.exec(text)?.[1]?.replaceAll(', ', '')

t.test('an e-mail address is verified by the code mailed to it; wrong codes are counted', async (t) => {
  const added = await call(ada, 'POST', methods, { type: 'email', address: 'Ada.Pager@Contacts.example', label: 'Pager inbox' })
  t.equal(added.statusCode, 201)
  t.match(added.json(), { type: 'email', address: 'ada.pager@contacts.example', verified: false, codeDelivery: { status: 'pending' } })
  const mail = await until('the code e-mail', () => smtp.received.find((m) => m.envelopeTo.includes('ada.pager@contacts.example')))
  const code = codeIn(mail.text)!
  const id = added.json().id
  const wrong = await call(ada, 'POST', `${methods}/${id}/verify`, { code: code === '000000' ? '000001' : '000000' })
  t.equal(wrong.statusCode, 400)
  t.match(wrong.json().message, /body\/code wrong code/)
  t.equal((await call(bo, 'POST', `${methods}/${id}/verify`, { code })).statusCode, 404, 'only its owner verifies it')
  const verified = await call(ada, 'POST', `${methods}/${id}/verify`, { code })
  t.equal(verified.statusCode, 200)
  t.match(verified.json(), { verified: true, label: 'Pager inbox' })
  t.equal((await call(ada, 'POST', methods, { type: 'email', address: 'ada.pager@contacts.example' })).statusCode, 409)
})

t.test('SMS and voice numbers get their code through Twilio; a call fetches its words from the product API', async (t) => {
  const sms = await call(ada, 'POST', methods, { type: 'sms', address: '+4915112345678' })
  t.equal(sms.statusCode, 201)
  const text = await until('the SMS', () => twilio.received.find((r) => r.kind === 'message' && r.to === '+4915112345678'))
  t.equal(text.from, twilio.from)
  t.match(text.statusCallback, /^https:\/\/product\.example\/api\/v1\/twilio\/status\/[0-9a-f-]{36}$/)
  t.equal((await call(ada, 'POST', `${methods}/${sms.json().id}/verify`, { code: codeIn(text.body!) })).json().verified, true)

  const voice = await call(ada, 'POST', methods, { type: 'voice', address: '+4915112345678' })
  t.equal(voice.statusCode, 201)
  const placed = await until('the call', () => twilio.received.find((r) => r.kind === 'call' && r.to === '+4915112345678'))
  t.match(placed.url, /^https:\/\/product\.example\/api\/v1\/twilio\/voice\/[0-9a-f-]{36}$/)
  const outbox = await app.database.db
    .selectFrom('core.outbox')
    .select(['bodyText', 'status', 'providerMessageId'])
    .where('kind', '=', 'contact.verification')
    .where('channel', '=', 'voice')
    .executeTakeFirstOrThrow()
  t.match(outbox, { status: 'sent', providerMessageId: placed.sid })
  t.equal(
    (await call(ada, 'POST', `${methods}/${voice.json().id}/verify`, { code: codeIn(outbox.bodyText) })).json().verified,
    true,
    'the spoken digits',
  )

  const refused = await call(ada, 'POST', methods, { type: 'sms', address: '+15005550001' })
  t.equal(refused.statusCode, 201)
  const failed = await until('Twilio’s refusal to be recorded', async () => {
    const row = await app.database.db
      .selectFrom('core.outbox')
      .select(['status', 'lastError'])
      .where('recipient', '=', '+15005550001')
      .executeTakeFirst()
    return row?.status === 'failed' && row
  })
  t.match(failed.lastError, /twilio: The 'To' number is not valid \(Twilio error 21211\)/, 'a 4xx is final, with Twilio’s words')
})

t.test('bad contact methods are refused naming the field; push subscriptions need no code', async (t) => {
  const cases: Array<[object, RegExp]> = [
    [{ type: 'sms', address: '0151 1234567' }, /body\/address must be an E.164 number/],
    [{ type: 'email', address: 'not-an-address' }, /body\/address must be an e-mail address/],
    [{ type: 'voice' }, /body\/address is required for voice/],
    [{ type: 'push', address: 'x@y.z' }, /body\/subscription is required for push/],
    [
      { type: 'push', subscription: { endpoint: 'https://127.0.0.1:8443/push/1', keys: { p256dh: 'BNc', auth: 'tBH' } } },
      /body\/subscription\/endpoint the target resolves to 127.0.0.1, a non-public address/,
    ],
    [{ type: 'fax', address: '+4915112345678' }, /type/],
  ]
  for (const [payload, message] of cases) {
    const response = await call(bo, 'POST', methods, payload)
    t.equal(response.statusCode, 400)
    t.match(response.json().message, message)
  }
  const push = await call(bo, 'POST', methods, {
    type: 'push',
    // A public address given as such: no name to resolve in a test without DNS.
    subscription: { endpoint: 'https://142.250.185.10/fcm/send/abc', keys: { p256dh: 'BNc…', auth: 'tBH…' } },
  })
  t.equal(push.statusCode, 201)
  t.match(push.json(), { type: 'push', address: 'https://142.250.185.10/fcm/send/abc', verified: true })
  t.same(
    (await call(bo, 'GET', methods)).json().data.map((method: { type: string }) => method.type),
    ['push'],
    'nothing of the refused ones was stored',
  )
})

t.test('five wrong codes void the code; a new one waits 30 seconds', async (t) => {
  const added = await call(bo, 'POST', methods, { type: 'email', address: 'bo.pager@contacts.example' })
  const id = added.json().id
  const mail = await until('the code e-mail', () => smtp.received.find((m) => m.envelopeTo.includes('bo.pager@contacts.example')))
  const code = codeIn(mail.text)!
  const wrong = code === '111111' ? '222222' : '111111'
  for (let attempt = 1; attempt <= 4; attempt += 1)
    t.match((await call(bo, 'POST', `${methods}/${id}/verify`, { code: wrong })).json().message, /wrong code$/)
  t.match((await call(bo, 'POST', `${methods}/${id}/verify`, { code: wrong })).json().message, /last try/)
  t.match(
    (await call(bo, 'POST', `${methods}/${id}/verify`, { code })).json().message,
    /no code is pending/,
    'even the right code is void now',
  )
  const early = await call(bo, 'POST', `${methods}/${id}/resend-code`)
  t.equal(early.statusCode, 429)
  t.ok(Number(early.headers['retry-after']) > 0)
  t.equal((await call(bo, 'DELETE', `${methods}/${id}`)).statusCode, 204)
  t.equal((await call(bo, 'DELETE', `${methods}/${id}`)).statusCode, 404)
})

t.test('codes expire; a verified method needs none; a new code comes after the wait', async (t) => {
  const db = app.database.db
  const added = await call(ada, 'POST', methods, { type: 'email', address: 'ada.late@contacts.example' })
  const id = added.json().id
  const mail = await until('the code e-mail', () => smtp.received.find((m) => m.envelopeTo.includes('ada.late@contacts.example')))
  await db
    .updateTable('divinux.contactMethods')
    .set({ codeExpiresAt: new Date(Date.now() - 1000) })
    .where('id', '=', id)
    .execute()
  t.match((await call(ada, 'POST', `${methods}/${id}/verify`, { code: codeIn(mail.text) })).json().message, /the code has expired/)
  // As if the 30 seconds had passed.
  await db
    .updateTable('divinux.contactMethods')
    .set({ codeSentAt: new Date(Date.now() - 60_000) })
    .where('id', '=', id)
    .execute()
  const resent = await call(ada, 'POST', `${methods}/${id}/resend-code`)
  t.equal(resent.statusCode, 200)
  t.match(resent.json(), { verified: false, codeDelivery: { status: 'pending' } })
  const second = await until('the second code', () => smtp.received.filter((m) => m.envelopeTo.includes('ada.late@contacts.example'))[1])
  const verified = await call(ada, 'POST', `${methods}/${id}/verify`, { code: codeIn(second.text) })
  t.equal(verified.json().verified, true)
  t.equal((await call(ada, 'POST', `${methods}/${id}/verify`, { code: '123456' })).json().verified, true, 'verifying again changes nothing')
  t.equal((await call(ada, 'POST', `${methods}/${id}/resend-code`)).statusCode, 409)
  const push = (await call(bo, 'GET', methods)).json().data.find((method: { type: string }) => method.type === 'push')
  t.equal((await call(bo, 'POST', `${methods}/${push.id}/resend-code`)).statusCode, 400)
  t.equal((await call(bo, 'POST', `${methods}/not-a-uuid/verify`, { code: '123456' })).statusCode, 404)
})

t.test('premium-rate, shared-cost and invalid numbers are refused before any code is sent', async (t) => {
  const pumper = await service.signIn('pumper@contacts.example')
  const cases: Array<[string, RegExp]> = [
    ['+449098765432', /body\/address is a premium-rate number/],
    ['+19005551234', /body\/address is a premium-rate number/],
    ['+34901123456', /body\/address is a shared-cost number/],
    ['+4912345678', /body\/address is not a valid phone number/],
  ]
  for (const [address, message] of cases) {
    for (const type of ['sms', 'voice']) {
      const response = await call(pumper, 'POST', methods, { type, address })
      t.equal(response.statusCode, 400, `${type} ${address}`)
      t.match(response.json().message, message)
    }
  }
  t.same((await call(pumper, 'GET', methods)).json().data, [], 'nothing stored')
  t.notOk(
    twilio.received.some((request) => cases.some(([address]) => request.to === address)),
    'and Twilio was never asked',
  )
})

t.test('codes to phone numbers are capped per person an hour and in total; removing a number does not reset them', async (t) => {
  const db = app.database.db
  const pumper = await service.signIn('hourly@contacts.example')
  const numbers = ['+4915120000001', '+4915120000002', '+4915120000003', '+4915120000004', '+4915120000005', '+4915120000006']
  const added = []
  for (const address of numbers.slice(0, 5)) {
    const response = await call(pumper, 'POST', methods, { type: 'sms', address })
    t.equal(response.statusCode, 201, address)
    added.push(response.json().id as string)
  }
  const sixth = await call(pumper, 'POST', methods, { type: 'voice', address: numbers[5] })
  t.equal(sixth.statusCode, 429)
  t.match(sixth.json().message, /at most 5 codes to phone numbers an hour/)
  t.ok(Number(sixth.headers['retry-after']) > 3000, 'back when the hour’s first code is an hour old')
  t.equal((await call(pumper, 'DELETE', `${methods}/${added[0]}`)).statusCode, 204)
  t.equal((await call(pumper, 'POST', methods, { type: 'sms', address: numbers[0] })).statusCode, 429, 'removing one frees nothing')
  t.equal((await call(pumper, 'GET', methods)).json().data.length, 4, 'the refused ones were not stored')
  t.equal(
    (await call(pumper, 'POST', methods, { type: 'email', address: 'hourly.mail@contacts.example' })).statusCode,
    201,
    'e-mail is not capped so',
  )

  // An hour later the hourly cap lets codes through again, until the lifetime cap.
  const { userId } = pumper
  await db
    .updateTable('divinux.phoneCodeSends')
    .set({ sentAt: new Date(Date.now() - 2 * 3_600_000) })
    .where('userId', '=', userId)
    .execute()
  await db
    .insertInto('divinux.phoneCodeSends')
    .values(Array.from({ length: 24 }, () => ({ userId, channel: 'sms', sentAt: new Date(Date.now() - 3 * 3_600_000) })))
    .execute()
  t.equal((await call(pumper, 'POST', methods, { type: 'sms', address: numbers[5] })).statusCode, 201, 'the 30th code')
  const past = await call(pumper, 'POST', methods, { type: 'voice', address: numbers[5] })
  t.equal(past.statusCode, 429)
  t.match(past.json().message, /you have been sent 30 codes to phone numbers, the most/)
})

t.test('wrong codes on one number are capped over all its codes', async (t) => {
  const db = app.database.db
  const guesser = await service.signIn('guesser@contacts.example')
  const added = await call(guesser, 'POST', methods, { type: 'sms', address: '+4915130000001' })
  const id = added.json().id as string
  const sms = await until('the SMS', () => twilio.received.find((r) => r.kind === 'message' && r.to === '+4915130000001'))
  const wrong = codeIn(sms.body!) === '111111' ? '222222' : '111111'
  for (let round = 0; round < 3; round += 1) {
    for (let attempt = 0; attempt < 5; attempt += 1) await call(guesser, 'POST', `${methods}/${id}/verify`, { code: wrong })
    // As if the 30 seconds between codes had passed.
    await db
      .updateTable('divinux.contactMethods')
      .set({ codeSentAt: new Date(Date.now() - 60_000) })
      .where('id', '=', id)
      .execute()
    const resent = await call(guesser, 'POST', `${methods}/${id}/resend-code`)
    if (round < 2) t.equal(resent.statusCode, 200, `code ${round + 2}`)
    else {
      t.equal(resent.statusCode, 429, 'after 15 wrong codes no code goes to the number')
      t.match(resent.json().message, /15 wrong codes were tried on this number/)
    }
  }
})
