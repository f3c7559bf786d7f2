import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startTestService, startTwilioServer, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// SMS subscribers of a status page (issue 58; decision 0015, "Subscribers"): double opt-in by a
// texted code, updates in two segments through Twilio's SDK (a loopback server speaking its API),
// and STOP, as Twilio forwards it signed, ending the number's subscriptions.

const callbackBase = 'https://product.example'
const twilio = await startTwilioServer(t)
const receiver = await startWebhookReceiver(t)
const service = await startTestService(t, buildApp, {
  config: {
    outbound: { allowPrivateTargets: true },
    notifier: {
      ...DEFAULT_NOTIFIER_CONFIG,
      retryDelaySeconds: 1,
      twilio: { accountSid: twilio.accountSid, authToken: twilio.authToken, from: twilio.from, apiUrl: twilio.url, callbackBase },
    },
  },
})
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'texts', { manager: { statuspages: 'manager' } })
const manager = person('manager')!
const base = `/api/v1/statuspages/organizations/${orgId}`
const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  app.inject({ method, url, headers: manager.headers, ...(payload ? { payload } : {}) })
const page = (await call('POST', `${base}/pages`, { name: 'Acme', slug: 'acme', published: true, locales: ['en', 'de'] })).json()
const api = (await call('POST', `${base}/pages/${page.id}/components`, { name: 'API' })).json()
const publicBase = '/api/v1/statuspages/public/acme'
const subscribe = (payload: object) => app.inject({ method: 'POST', url: `${publicBase}/subscribers`, payload })
const confirm = (phone: string, code: string) =>
  app.inject({ method: 'POST', url: `${publicBase}/subscribers/confirm-sms`, payload: { phone, code } })
const textsTo = (phone: string) => twilio.received.filter((request) => request.kind === 'message' && request.to === phone)
const subscribers = async () =>
  (await call('GET', `${base}/pages/${page.id}/subscribers`)).json().data as Array<{
    kind: string
    phone: string | null
    confirmed: boolean
  }>

/** A message as Twilio forwards a text to our number: form-encoded, signed over the public URL. */
const textFrom = (phone: string, body: string, signed = true) => {
  const params = { From: phone, To: twilio.from, Body: body, ...(body === 'STOP' ? { OptOutType: 'STOP' } : {}) }
  const path = '/api/v1/twilio/sms'
  return app.inject({
    method: 'POST',
    url: path,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signed ? twilio.sign(`${callbackBase}${path}`, params) : 'forged',
    },
    payload: new URLSearchParams(params).toString(),
  })
}

const ada = '+4915112345678'
const bob = '+14155550100'

t.test('a number is confirmed by the code texted to it, in its language', async (t) => {
  const refused = await subscribe({ phone: '0151 1234' })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /phone/)

  const asked = await subscribe({ phone: ada, locale: 'de', componentIds: [api.id] })
  t.equal(asked.statusCode, 202)
  t.same(asked.json(), { id: asked.json().id, kind: 'sms', confirmed: false })
  const text = await until('the code', () => textsTo(ada)[0])
  t.match(text.body, /^Status-Updates von Acme: Ihr Code ist \d{6}\./)
  const code = /\d{6}/.exec(text.body!)![0]
  t.equal((await subscribe({ phone: ada })).statusCode, 202, 'asking again within ten minutes')
  t.equal(textsTo(ada).length, 1, 'sends nothing more')

  const wrong = await confirm(ada, code === '000000' ? '000001' : '000000')
  t.equal(wrong.statusCode, 400)
  t.match(wrong.json().message, /code.*wrong or has expired/)
  t.match(await subscribers(), [{ kind: 'sms', phone: ada, confirmed: false }])
  const right = await confirm(ada, code)
  t.equal(right.statusCode, 200)
  t.same(right.json(), { confirmed: true })
  t.match(await subscribers(), [{ kind: 'sms', phone: ada, confirmed: true }])
  t.equal((await confirm(ada, code)).statusCode, 400, 'a code works once')
  const again = await subscribe({ phone: ada })
  t.same(again.json(), { id: again.json().id, kind: 'sms', confirmed: false }, 'the answer does not tell that the number is subscribed')
})

t.test('five wrong codes void the code', async (t) => {
  await subscribe({ phone: bob })
  const code = /\d{6}/.exec((await until('the code', () => textsTo(bob)[0])).body!)![0]
  const wrongCode = code === '999999' ? '999998' : '999999'
  const answers = []
  for (let attempt = 0; attempt < 5; attempt++) answers.push((await confirm(bob, wrongCode)).json().message as string)
  t.match(answers.slice(0, 4), [/wrong/, /wrong/, /wrong/, /wrong/])
  t.match(answers[4], /too many wrong codes/)
  const late = await confirm(bob, code)
  t.equal(late.statusCode, 400, 'the right code no longer confirms')
  t.match(late.json().message, /too many wrong codes/)
})

t.test('updates are texted in two segments at most, with the page and how to stop', async (t) => {
  const incident = (
    await call('POST', `${base}/pages/${page.id}/incidents`, {
      name: 'API slow',
      body: `Requests take longer than usual. ${'We are looking into it. '.repeat(30)}`,
      impact: 'minor',
      components: [{ componentId: api.id, status: 'degraded_performance' }],
    })
  ).json()
  const text = await until('the update', () => textsTo(ada)[1])
  t.match(text.body, /^\[Acme\] API slow: .+\. Requests take longer than usual\./)
  t.match(text.body, / https?:\/\/\S+\/public\/acme\/ Antworten Sie STOP zum Abbestellen\.$/)
  t.ok(text.body!.length <= 306, `${text.body!.length} characters`)
  t.match(text.body, /… https?:/, 'the body is cut where it does not fit')
  t.equal(textsTo(bob).length, 1, 'an unconfirmed number is sent nothing')
  await call('POST', `${base}/pages/${page.id}/incidents/${incident.id}/updates`, { body: 'Fast again', status: 'resolved' })
  await until('the resolution', () => textsTo(ada)[2])
})

t.test('STOP, as Twilio forwards it, ends the number’s subscriptions and is answered with nothing', async (t) => {
  t.equal((await textFrom(ada, 'STOP', false)).statusCode, 403, 'only when Twilio signed it')
  t.equal((await subscribers()).filter((row) => row.phone === ada).length, 1)
  const stopped = await textFrom(ada, 'STOP')
  t.equal(stopped.statusCode, 200)
  t.notMatch(stopped.body, /<Message>/, 'no reply: Twilio confirms the opt-out itself')
  t.same(
    (await subscribers()).filter((row) => row.phone === ada),
    [],
  )
  // A webhook subscriber's message is written in the same job as the number's would be: once it
  // has arrived, the outbox holds every message of the incident.
  t.equal((await call('POST', `${base}/pages/${page.id}/subscribers`, { url: `${receiver.url}/control` })).statusCode, 201)
  const textsQueued = () =>
    app.database.db.selectFrom('core.outbox').select('id').where('channel', '=', 'sms').where('recipient', '=', ada).execute()
  const queued = (await textsQueued()).length
  await call('POST', `${base}/pages/${page.id}/incidents`, { name: 'API down', body: 'Down', impact: 'major' })
  await until('the webhook subscriber’s event', () => receiver.received.find((entry) => entry.path === '/control'))
  t.equal((await textsQueued()).length, queued, 'nothing more is written for the number')
})
