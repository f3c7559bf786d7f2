import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// A subscriber's delivery log: what each subscriber was sent and how its delivery went, so a
// manager can tell a subscriber "we sent it at 10:02 and your endpoint answered 410".

const smtp = await startSmtpServer(t)
// `/gone` refuses for good; `/flaky` fails its first delivery and takes the retry.
const receiver = await startWebhookReceiver(t, (path, attempt) => {
  if (path === '/gone') return { status: 410, body: 'no such hook' }
  if ((path === '/flaky' || path === '/ordered') && attempt === 1) return { status: 503 }
  return { status: 204 }
})
const service = await startTestService(t, buildApp, {
  config: {
    outbound: { allowPrivateTargets: true },
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Status <status@example.com>', retryDelaySeconds: 1 },
  },
})
const { app } = service
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'log', {
  manager: { statuspages: 'manager' },
  viewer: { statuspages: 'viewer' },
  responder: { alerting: 'responder' },
})
const [manager, viewer, stranger, outsider] = ['manager', 'viewer', 'stranger', 'responder'].map(person)
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const base = `/api/v1/statuspages/organizations/${orgId}`
const page = (await call(manager!, 'POST', `${base}/pages`, { name: 'Log', slug: 'log', published: true })).json()
const pageBase = `${base}/pages/${page.id}`
const api = (await call(manager!, 'POST', `${pageBase}/components`, { name: 'API' })).json()
const subscribe = async (path: string) =>
  (await call(manager!, 'POST', `${pageBase}/subscribers`, { url: `${receiver.url}${path}` })).json<{ id: string }>().id
const ok = await subscribe('/ok')
const gone = await subscribe('/gone')
const flaky = await subscribe('/flaky')

interface Entry {
  id: string
  event: string
  incidentId: string
  incidentName: string
  kind: string
  updateStatus: string
  status: string
  attempts: number
  lastError: string | null
  sentAt: string | null
}
const logOf = async (subscriberId: string, who: Who = viewer!) =>
  (await call(who, 'GET', `${pageBase}/subscribers/${subscriberId}/notifications`)).json<{ data: Entry[]; meta: { total: number } }>()
const settled = (subscriberId: string, count: number, timeoutMs?: number) =>
  until(
    `${count} settled notifications of ${subscriberId}`,
    async () => {
      const log = await logOf(subscriberId)
      return log.data.length === count && log.data.every((entry) => entry.status === 'sent' || entry.status === 'failed') ? log : undefined
    },
    timeoutMs,
  )

t.test('each notification is listed with its delivery: sent, failed with the reason, or sent on a retry', async (t) => {
  const incident = (
    await call(manager!, 'POST', `${pageBase}/incidents`, {
      name: 'API errors',
      body: 'Looking into it',
      impact: 'major',
      components: [{ componentId: api.id, status: 'partial_outage' }],
    })
  ).json()

  const delivered = await settled(ok, 1)
  t.match(delivered.data[0], {
    event: 'incident.created',
    incidentId: incident.id,
    incidentName: 'API errors',
    kind: 'incident',
    updateStatus: 'investigating',
    status: 'sent',
    attempts: 1,
    lastError: null,
  })
  t.ok(delivered.data[0]!.sentAt)
  const received = receiver.received.find((entry) => entry.path === '/ok')
  t.equal(`msg_${delivered.data[0]!.id}`, received?.headers['webhook-id'], 'the entry names the webhook-id the receiver saw')

  const refused = await settled(gone, 1)
  t.match(refused.data[0], { status: 'failed', attempts: 1, sentAt: null })
  t.match(refused.data[0]!.lastError, /410/, 'the receiver’s answer is the reason')

  const retried = await settled(flaky, 1)
  t.match(retried.data[0], { status: 'sent', attempts: 2, lastError: null })

  await call(manager!, 'POST', `${pageBase}/incidents/${incident.id}/updates`, { body: 'Fixed', status: 'resolved' })
  const newestFirst = await settled(ok, 2)
  t.same(
    newestFirst.data.map((entry) => entry.event),
    ['incident.resolved', 'incident.created'],
  )
  t.equal(newestFirst.meta.total, 2)
  const paged = (await call(viewer!, 'GET', `${pageBase}/subscribers/${ok}/notifications?limit=1&page=2`)).json()
  t.same(
    paged.data.map((entry: Entry) => entry.event),
    ['incident.created'],
  )
})

t.test('an e-mail subscriber’s log lists its mail once it is confirmed; the confirmation itself is not a notification', async (t) => {
  const added = (await call(manager!, 'POST', `${pageBase}/subscribers`, { email: 'reader@example.com' })).json()
  t.same((await logOf(added.id)).data, [])
  const confirmation = await until('the confirmation', () => smtp.received.find((mail) => mail.envelopeTo.includes('reader@example.com')))
  const link = new URL(/https?:\/\/\S+\/subscribers\/confirm\?token=[\w-]+/.exec(confirmation.text)![0])
  t.equal((await app.inject({ method: 'GET', url: link.pathname + link.search })).statusCode, 200)
  await call(manager!, 'POST', `${pageBase}/incidents`, { name: 'Slow', body: 'Slow', impact: 'minor' })
  const log = await settled(added.id, 1)
  t.match(log.data[0], { event: 'incident.created', incidentName: 'Slow', status: 'sent', attempts: 1 })
})

t.test('the log is read with statuspages viewer, only for a subscriber of the page named, within its organization', async (t) => {
  const other = (await call(manager!, 'POST', `${base}/pages`, { name: 'Other', slug: 'other-log' })).json()
  const cases: Array<[string, Who, string, number]> = [
    ['no statuspages role', outsider!, `${pageBase}/subscribers/${ok}/notifications`, 403],
    ['another organization’s member', stranger!, `${pageBase}/subscribers/${ok}/notifications`, 404],
    [
      'the page under another organization',
      stranger!,
      `/api/v1/statuspages/organizations/${otherOrgId}/pages/${page.id}/subscribers/${ok}/notifications`,
      404,
    ],
    ['a subscriber of another page', viewer!, `${base}/pages/${other.id}/subscribers/${ok}/notifications`, 404],
    ['an unknown subscriber', viewer!, `${pageBase}/subscribers/${other.id}/notifications`, 404],
    ['not an id', viewer!, `${pageBase}/subscribers/nope/notifications`, 404],
  ]
  for (const [why, who, url, status] of cases) {
    const response = await call(who, 'GET', url)
    t.equal(response.statusCode, status, why)
    t.match(response.json(), { statusCode: status, message: String }, `${why}: the documented error shape`)
  }
  t.equal((await call(viewer!, 'GET', `${pageBase}/subscribers/${ok}/notifications?limit=0`)).statusCode, 400)
})

t.test('one incident’s updates reach a subscriber in their order, its first delivery retried included', async (t) => {
  const ordered = await subscribe('/ordered')
  const incident = (
    await call(manager!, 'POST', `${pageBase}/incidents`, { name: 'Queue lag', body: 'Investigating', impact: 'minor' })
  ).json()
  // Back to back: each update's notifications are a job of their own, and the first delivery fails once.
  await call(manager!, 'POST', `${pageBase}/incidents/${incident.id}/updates`, { body: 'Found it', status: 'identified' })
  await call(manager!, 'POST', `${pageBase}/incidents/${incident.id}/updates`, { body: 'Fixed', status: 'resolved' })
  // The later two wait for the first one's retry (decision 0011, "Order"): longer than one delivery.
  const log = await settled(ordered, 3, 60_000)
  t.comment(`attempts, newest first: ${log.data.map((entry) => `${entry.event} ${entry.attempts}`).join(', ')}`)
  const deliveries = receiver.received.filter((entry) => entry.path === '/ordered')
  t.same(
    deliveries.map((entry) => (entry.body as { type: string }).type),
    ['incident.created', 'incident.created', 'incident.updated', 'incident.resolved'],
    'the refused first delivery is retried before anything later is sent',
  )
})
