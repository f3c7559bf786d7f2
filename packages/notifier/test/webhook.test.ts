import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { webhookProvider } from '@svc/notifier'
import { startWebhookReceiver } from '@svc/testkit'

const receiver = await startWebhookReceiver(t, (path) => {
  if (path === '/gone') return { status: 410, body: 'unsubscribed' }
  if (path === '/busy') return { status: 503, body: 'later' }
  if (path === '/slow-down') return { status: 429 }
  return { status: 204 }
})
const secret = `whsec_${Buffer.from('a-secret-of-twenty-four!').toString('base64')}`
const targets = new Map([
  ['subscriber:ok', { url: `${receiver.url}/ok`, secret }],
  ['subscriber:gone', { url: `${receiver.url}/gone`, secret }],
  ['subscriber:busy', { url: `${receiver.url}/busy`, secret }],
  ['subscriber:slow', { url: `${receiver.url}/slow-down`, secret }],
  ['subscriber:bad-url', { url: 'ftp://example.com/x', secret }],
])
const provider = webhookProvider({ resolve: async (recipient) => targets.get(recipient), policy: { allowPrivateTargets: true } })
t.teardown(() => provider.close?.())
const message = (to: string) => ({ id: '5f3c1e0a-0000-4000-8000-000000000001', to, subject: '', text: '{"type":"incident.created"}' })

t.test('a webhook message is POSTed as its text, signed per Standard Webhooks with the outbox id', async (t) => {
  const sent = await provider.send(message('subscriber:ok'))
  t.equal(sent.messageId, 'msg_5f3c1e0a-0000-4000-8000-000000000001')
  const delivery = receiver.received.find((request) => request.path === '/ok')!
  t.equal(delivery.raw, '{"type":"incident.created"}')
  t.equal(delivery.headers['content-type'], 'application/json')
  const verified = new Webhook(secret).verify(delivery.raw, {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  })
  t.same(verified, { type: 'incident.created' })
})

t.test('why a webhook failed, and whether trying again can help', async (t) => {
  await t.rejects(provider.send(message('subscriber:gone')), { message: /answered 410: unsubscribed/, permanent: true })
  await t.rejects(provider.send(message('subscriber:busy')), { message: /answered 503: later/, permanent: false })
  await t.rejects(provider.send(message('subscriber:slow')), { message: /answered 429/, permanent: false })
  await t.rejects(provider.send(message('subscriber:removed')), { message: /no longer exists/, permanent: true })
  await t.rejects(provider.send(message('subscriber:bad-url')), { message: /http or https/, permanent: true })
  const guarded = webhookProvider({ resolve: async (recipient) => targets.get(recipient), policy: { allowPrivateTargets: false } })
  await t.rejects(guarded.send(message('subscriber:ok')), { message: /address/, permanent: true }, 'a loopback target is refused')
  guarded.close?.()
})
