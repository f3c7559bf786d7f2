import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { DeliveryError, pushRecipient, webPushProvider } from '@svc/notifier'
import { startPushService } from '@svc/testkit'

const vapid = {
  publicKey: 'BDVt_vUaE9X8rhflA032NKeST4hQO_heX1y3jevSlbX5JvInn-8WgSPnhIbmIMVmGtx0odVWOvgNncpS1FtSLV4',
  privateKey: 'xgvCOGAp6HXUiWcnnAgIIHEMNLwgYaEUnvO-1yTcwbs',
  subject: 'mailto:oncall@example.com',
}
const pushService = await startPushService(t)
const withdrawn: string[][] = []
const provider = webPushProvider({ ...vapid, allowPrivateTargets: true, extraCa: [pushService.ca] }, async (endpoints) => {
  withdrawn.push(endpoints)
})
const message = (to: string) => ({ id: 'message-1', to, subject: 'Page', text: '{"title":"[P1] Down"}' })

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

t.test('a push reaches the subscription, and counts as sent when one of several devices took it', async (t) => {
  const alive = pushService.subscribe()
  const gone = pushService.subscribe()
  pushService.expire(gone.endpoint)
  const sent = await provider.send(message(pushRecipient([gone, alive])))
  t.match(sent.messageId, /^https:\/\/127\.0\.0\.1:\d+\/message\//)
  t.equal(pushService.received.at(-1)?.payload, '{"title":"[P1] Down"}')
  t.same(withdrawn.splice(0), [[gone.endpoint]], 'the gone device is reported, the living one is not')
})

t.test('why a push failed, and whether trying again can help', async (t) => {
  const gone = pushService.subscribe()
  pushService.expire(gone.endpoint)
  await t.rejects(provider.send(message(pushRecipient([gone]))), {
    message: /answered 410: the subscription has expired or was withdrawn/,
    permanent: true,
  })
  const nowhere = { ...pushService.subscribe(), endpoint: `https://127.0.0.1:${await closedPort()}/push/x` }
  await t.rejects(provider.send(message(pushRecipient([nowhere]))), { message: /ECONNREFUSED/, permanent: false })
  await t.rejects(provider.send(message(pushRecipient([]))), { message: /names no subscription/, permanent: true })
  t.same(withdrawn.splice(0), [[gone.endpoint]], 'a refused connection says nothing of the subscription')

  const guarded = webPushProvider({ ...vapid, allowPrivateTargets: false, extraCa: [pushService.ca] })
  const error = await guarded.send(message(pushRecipient([pushService.subscribe()]))).catch((failure: unknown) => failure)
  t.ok(error instanceof DeliveryError)
  t.match(error, { message: /non-public address/, permanent: true }, 'a private push service is refused at connect time')
  guarded.close?.()
})
