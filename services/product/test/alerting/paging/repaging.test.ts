import { sql } from 'kysely'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Paging again (decision 0019): an acknowledgement that times out under its policy, and an
// incident's snooze that ends, page from the first step again. The minutes are skipped by moving
// the escalation's re-page time to now, as if they had passed.

const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Paging <paging@example.com>', retryDelaySeconds: 1 },
    productLinkBase: 'https://product.example',
  },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'repaging', { manager: 'manager', ada: 'responder' })
const [manager, ada] = ['manager', 'ada'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

async function configWith(policy: object): Promise<string> {
  const created = await call(manager!, 'POST', `${base}/escalation-policies`, policy)
  if (created.statusCode !== 201) throw new Error(created.body)
  const config = await call(manager!, 'POST', `${base}/webhooks`, {
    name: `For ${created.json().name}`,
    escalationPolicyId: created.json().id,
  })
  return config.json().ingestPath
}
const ingest = async (path: string, event: object) =>
  (await app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(event) })).json()
    .alertId as string
const escalation = async (alertId: string) =>
  (await call(manager!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().escalation as { state: string; nextAt: string | null }
const events = async (alertId: string) =>
  (await call(manager!, 'GET', `${base}/alerts/${alertId}/events?limit=100`)).json().data as Array<{
    type: string
    data: { reason?: string }
  }>
const pagesTo = (email: string, title: string) =>
  smtp.received.filter((message) => message.envelopeTo.includes(email) && message.subject.includes(title)).length
/** As if the minutes to the alert's re-page had passed. */
const reachRepage = (alertId: string) =>
  sql`update divinux.alert_escalations set next_at = now() where alert_id = ${alertId} and state = 'acknowledged'`.execute(db)

t.test('an acknowledgement times out under its policy: the alert is open again and pages from the first step', async (t) => {
  const path = await configWith({
    name: 'Timeout after 10',
    ackTimeoutMinutes: 10,
    steps: [{ delayMinutes: 30, targets: [{ type: 'user', id: ada!.userId }] }],
  })
  const policies = (await call(manager!, 'GET', `${base}/escalation-policies`)).json().data as Array<{
    name: string
    ackTimeoutMinutes: number | null
  }>
  t.equal(policies.find((policy) => policy.name === 'Timeout after 10')?.ackTimeoutMinutes, 10)

  const alertId = await ingest(path, { title: 'Disk filling', service: 'db', priority: 'P3' })
  await until('the first page', () => pagesTo(ada!.email, 'Disk filling') === 1)
  t.equal((await call(ada!, 'POST', `${base}/alerts/${alertId}/acknowledge`)).statusCode, 200)
  const acknowledged = await escalation(alertId)
  t.equal(acknowledged.state, 'acknowledged')
  const minutes = (Date.parse(acknowledged.nextAt ?? '') - Date.now()) / 60_000
  t.ok(minutes > 9.9 && minutes <= 10, `pages again in 10 minutes (${minutes.toFixed(2)})`)

  await reachRepage(alertId)
  await until('the second page', () => pagesTo(ada!.email, 'Disk filling') === 2)
  const alert = (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json()
  t.match(alert, { status: 'open', acknowledgedAt: null, acknowledgedBy: null })
  t.match(
    (await events(alertId)).find((event) => event.type === 'reopened'),
    { data: { reason: 'its acknowledgement timed out' } },
  )
  t.match(await escalation(alertId), { state: 'active', step: 1 }, 'its one step paged again, its 30 minutes waited out before it ends')

  t.equal((await call(ada!, 'POST', `${base}/alerts/${alertId}/resolve`)).statusCode, 200)
  t.match(await escalation(alertId), { nextAt: null }, 'a resolved alert pages no more')
})

t.test('without a timeout an acknowledgement holds', async (t) => {
  const path = await configWith({ name: 'No timeout', steps: [{ delayMinutes: 30, targets: [{ type: 'user', id: ada!.userId }] }] })
  const alertId = await ingest(path, { title: 'Cert expiring', service: 'edge', priority: 'P3' })
  await until('the page', () => pagesTo(ada!.email, 'Cert expiring') === 1)
  await call(ada!, 'POST', `${base}/alerts/${alertId}/acknowledge`)
  t.match(await escalation(alertId), { state: 'acknowledged', nextAt: null })
})

t.test('a snoozed incident pages again when the snooze ends, back in triage', async (t) => {
  const path = await configWith({
    name: 'Incident paging',
    steps: [{ delayMinutes: 30, targets: [{ type: 'user', id: ada!.userId }] }],
  })
  const alertId = await ingest(path, { title: 'Checkout failing', service: 'checkout', priority: 'P1' })
  await until('the page', () => pagesTo(ada!.email, 'Checkout failing') === 1)
  const incident = await until(
    'the incident the P1 opened',
    async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident,
  )
  const url = `${base}/incidents/${incident.id}`

  const inTriage = await call(ada!, 'POST', `${url}/snooze`, { minutes: 30 })
  t.equal(inTriage.statusCode, 409)
  t.match(inTriage.json().message, /in triage: acknowledge it before snoozing it/)
  await call(ada!, 'PATCH', url, { status: 'investigating' })
  t.equal((await call(ada!, 'POST', `${url}/snooze`, { minutes: 8 * 24 * 60 })).statusCode, 400, 'at most a week')
  t.equal((await call(ada!, 'POST', `${url}/snooze`, { until: new Date(Date.now() - 1000).toISOString() })).statusCode, 400)
  t.equal((await call(ada!, 'POST', `${url}/snooze`, {})).statusCode, 400)

  const snoozed = await call(ada!, 'POST', `${url}/snooze`, { minutes: 30 })
  t.equal(snoozed.statusCode, 200)
  const until30 = Date.parse(snoozed.json().snoozedUntil)
  t.ok(Math.abs(until30 - Date.now() - 30 * 60_000) < 5_000, 'snoozed for 30 minutes')
  t.equal(Date.parse((await escalation(alertId)).nextAt ?? ''), until30, 'its alert pages again then')

  await reachRepage(alertId)
  await until('the page after the snooze', () => pagesTo(ada!.email, 'Checkout failing') === 2)
  const after = (await call(ada!, 'GET', url)).json()
  t.match(after, { status: 'triage', snoozedUntil: null })
  const timeline = (await call(ada!, 'GET', `${url}/timeline`)).json().data as Array<{
    kind: string
    data: object
    authorId: string | null
  }>
  t.match(
    timeline.find((entry) => entry.kind === 'repaged'),
    { data: { alertId, reason: 'the incident’s snooze ended' }, authorId: null },
  )
  t.match(
    timeline.find((entry) => entry.kind === 'snoozed'),
    { authorId: ada!.userId },
  )
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', incident.id).execute()
  t.ok(
    audit.some((entry) => entry.action === 'incident.snoozed'),
    'audited',
  )

  await call(ada!, 'PATCH', url, { status: 'resolved' })
  const resolved = await call(ada!, 'POST', `${url}/snooze`, { minutes: 30 })
  t.equal(resolved.statusCode, 409)
  t.match(resolved.json().message, /is resolved/)
})

t.test('an incident none of whose alerts pages anyone has nothing to snooze', async (t) => {
  const declared = (await call(ada!, 'POST', `${base}/incidents`, { title: 'Slow search', severity: 'SEV3' })).json()
  await call(ada!, 'PATCH', `${base}/incidents/${declared.id}`, { status: 'investigating' })
  const refused = await call(ada!, 'POST', `${base}/incidents/${declared.id}/snooze`, { minutes: 30 })
  t.equal(refused.statusCode, 409)
  t.match(refused.json().message, /pages anyone/)
})
