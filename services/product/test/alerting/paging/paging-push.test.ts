import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startPushService, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// A VAPID key pair as `npx web-push generate-vapid-keys` makes one (made for this test only).
const vapid = {
  publicKey: 'BDVt_vUaE9X8rhflA032NKeST4hQO_heX1y3jevSlbX5JvInn-8WgSPnhIbmIMVmGtx0odVWOvgNncpS1FtSLV4',
  privateKey: 'xgvCOGAp6HXUiWcnnAgIIHEMNLwgYaEUnvO-1yTcwbs',
  subject: 'mailto:oncall@push.example',
}
const pushService = await startPushService(t)
const productUrl = 'https://product.example'
const service = await startTestService(t, buildApp, {
  config: {
    outbound: { allowPrivateTargets: true },
    productLinkBase: productUrl,
    notifier: {
      ...DEFAULT_NOTIFIER_CONFIG,
      retryDelaySeconds: 1,
      webPush: { ...vapid, allowPrivateTargets: true, extraCa: [pushService.ca] },
    },
  },
})
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'push', {
  manager: 'manager',
  ada: 'responder',
  bo: 'responder',
  viewer: 'viewer',
})
const [manager, ada, bo, viewer] = ['manager', 'ada', 'bo', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
type Attempt = { email: string; channel: string; status: string; recipient: string | null; error: string | null; providerMessageId: string }
const attempts = async (alertId: string): Promise<Attempt[]> =>
  (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().data

const laptop = pushService.subscribe()
const phone = pushService.subscribe()
for (const who of [ada!, bo!])
  await call(who, 'PATCH', '/api/v1/users/me/notifications', { channels: { push: { enabled: true } }, priorities: { P1: ['push'] } })
const policy = (
  await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Ada and Bo',
    steps: [
      {
        delayMinutes: 5,
        targets: [
          { type: 'user', id: ada!.userId },
          { type: 'user', id: bo!.userId },
        ],
      },
    ],
  })
).json()
const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })).json()
// Every alert here is a matter of its own that must page: correlation is off, so none is grouped
// into an earlier alert's incident (decision 0019; correlation.test.ts covers grouping).
await call(manager!, 'PUT', `${base}/incident-rules`, { rules: [] })
const ingest = async (title: string) =>
  (
    await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title, service: 'payments', priority: 'P1' }),
    })
  ).json().alertId as string
const pushesOf = (title: string) => pushService.received.filter((push) => push.payload.includes(title))
const pushDevicesOf = async (who: Who): Promise<string[]> =>
  (await call(who, 'GET', '/api/v1/users/me/contact-methods'))
    .json()
    .data.flatMap((method: { type: string; label: string | null }) => (method.type === 'push' ? [method.label] : []))

t.test('browsers subscribe with the service’s VAPID key', async (t) => {
  t.same((await call(ada!, 'GET', '/api/v1/users/me/contact-methods/push-key')).json(), { publicKey: vapid.publicKey })
  for (const [subscription, label] of [
    [laptop, 'Laptop'],
    [phone, 'Phone'],
  ] as const) {
    const added = await call(ada!, 'POST', '/api/v1/users/me/contact-methods', { type: 'push', subscription, label })
    t.equal(added.statusCode, 201, label)
  }
})

t.test('a P1 page reaches every subscribed browser, encrypted and signed with VAPID; its action acknowledges', async (t) => {
  const alertId = await ingest('Payments failing')
  const pushes = await until('a push on both devices', () => pushesOf('Payments failing').length === 2 && pushesOf('Payments failing'))
  t.same(pushes.map((push) => push.subscriptionId).sort(), [laptop, phone].map((s) => s.endpoint.split('/').pop()).sort())
  const [push] = pushes
  t.match(push!.headers, { 'content-encoding': 'aes128gcm', urgency: 'high', ttl: '3600' })
  t.equal(push!.vapidKey, vapid.publicKey)
  t.match(push!.claims, { aud: new URL(laptop.endpoint).origin, sub: vapid.subject })
  t.ok(push!.claims.exp > Date.now() / 1000, 'the VAPID token has not expired')
  const shown = JSON.parse(push!.payload)
  t.match(shown, {
    title: '[P1] Payments failing',
    // The P1 opened INC-1: the page names it.
    body: 'payments · INC-1 · Ada and Bo, step 1',
    tag: `alert-${alertId}`,
    requireInteraction: true,
    data: { alertId, priority: 'P1', url: `${productUrl}/api/v1/organizations/${orgId}/alerts/${alertId}` },
    actions: [{ action: 'acknowledge' }],
  })

  const sent = await until('the push attempts settled', async () => {
    const found = (await attempts(alertId)).filter((attempt) => attempt.channel === 'push')
    return found.length === 2 && found.every((attempt) => attempt.status !== 'queued') && found
  })
  const adas = sent.find((attempt) => attempt.email === 'ada@push.example')!
  t.match(adas, { status: 'sent', recipient: /^127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+$/, providerMessageId: /\/message\/\S* \S*\/message\// })
  t.match(
    sent.find((attempt) => attempt.email === 'bo@push.example'),
    {
      status: 'failed',
      recipient: null,
      error: 'no web-push subscription: subscribe a browser at /api/v1/users/me/contact-methods',
    },
  )

  // The service worker's "acknowledge" action POSTs the link it was given.
  const ack = await app.inject({ method: 'POST', url: new URL(shown.data.ackUrl).pathname })
  t.equal(ack.statusCode, 200)
  t.match((await call(viewer!, 'GET', `${base}/alerts/${alertId}`)).json(), { status: 'acknowledged', acknowledgedBy: ada!.userId })
})

t.test('a page still counts as sent when one device unsubscribed, and fails with why when all did; gone devices are removed', async (t) => {
  t.same(await pushDevicesOf(ada!), ['Laptop', 'Phone'])
  pushService.expire(laptop.endpoint)
  const halfway = await ingest('Refunds stuck')
  await until('the push on the phone', () => pushesOf('Refunds stuck').length === 1 || undefined)
  t.match(
    await until('the attempt sent', async () =>
      (await attempts(halfway)).find((a) => a.email === 'ada@push.example' && a.status === 'sent'),
    ),
    { channel: 'push' },
  )
  t.same(await pushDevicesOf(ada!), ['Phone'], 'the push service said the laptop is gone: it is not tried again')

  pushService.expire(phone.endpoint)
  const gone = await ingest('Payouts late')
  const failed = await until('the attempt failed', async () =>
    (await attempts(gone)).find((a) => a.email === 'ada@push.example' && a.status === 'failed'),
  )
  t.match(failed.error, /^web push to 127\.0\.0\.1:\d+ answered 410: the subscription has expired or was withdrawn$/)
  t.equal(pushesOf('Payouts late').length, 0)
  t.same(await pushDevicesOf(ada!), [])
})
