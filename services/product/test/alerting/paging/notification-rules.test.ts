import { sql } from 'kysely'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Notification rules (decision 0014): each channel at its delay while a page is unacknowledged,
// per urgency, and urgency from the priority and the service's support hours. A rule's minutes
// are skipped by moving its job's start to now, as if they had passed.

const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Paging <paging@example.com>', retryDelaySeconds: 1 },
    productLinkBase: 'https://product.example',
  },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'rules', { manager: 'manager', ada: 'responder', viewer: 'viewer' })
const [manager, ada, viewer] = ['manager', 'ada', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const policy = (
  await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Ada',
    steps: [{ delayMinutes: 30, targets: [{ type: 'user', id: ada!.userId }] }],
  })
).json()
// Each alert here pages for itself: no correlation rule joins one to another's incident.
await call(manager!, 'PUT', `${base}/incident-rules`, { rules: [] })
const ingestPath = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })).json()
  .ingestPath
const fire = async (event: object) =>
  (
    await app.inject({ method: 'POST', url: ingestPath, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(event) })
  ).json().alertId as string
const attempts = async (alertId: string) =>
  (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().data as Array<{
    channel: string
    status: string
    error: string | null
  }>
const mailsAbout = (title: string) => smtp.received.filter((mail) => mail.subject.includes(title)).length
/** As if a rule's delay had passed: its jobs start now. */
const passDelays = () =>
  sql`update pgboss.job set start_after = now() where name = 'alerting.notification-rule' and state in ('created', 'retry')`.execute(db)
const rulesDone = () =>
  until('the rules’ jobs to finish', async () => {
    const waiting = await sql<{ count: number }>`
      select count(*)::int as count from pgboss.job where name = 'alerting.notification-rule' and state in ('created', 'retry', 'active')`.execute(
      db,
    )
    return waiting.rows[0]!.count === 0
  })
const hhmm = (date: Date) => date.toISOString().slice(11, 16)

t.test('rules are set with the preferences; a channel named twice in an urgency is refused', async (t) => {
  const twice = await call(ada!, 'PATCH', '/api/v1/users/me/notifications', {
    rules: {
      high: [
        { channel: 'push', delayMinutes: 0 },
        { channel: 'push', delayMinutes: 5 },
      ],
      low: [{ channel: 'email', delayMinutes: 0 }],
    },
  })
  t.equal(twice.statusCode, 400)
  t.match(twice.json().message, /rules\/high\/1\/channel names push twice/)
  t.equal((await call(ada!, 'GET', '/api/v1/users/me/notifications')).json().rules, null, 'none until chosen')
  const set = await call(ada!, 'PATCH', '/api/v1/users/me/notifications', {
    rules: {
      high: [
        { channel: 'push', delayMinutes: 0 },
        { channel: 'email', delayMinutes: 2 },
      ],
      low: [{ channel: 'email', delayMinutes: 0 }],
    },
  })
  t.equal(set.statusCode, 200)
  t.match(set.json().rules, { high: [{ channel: 'push' }, { channel: 'email', delayMinutes: 2 }] })
})

t.test('a high-urgency page follows the rule: push at once, e-mail after its delay while unacknowledged', async (t) => {
  const alertId = await fire({ title: 'API down', service: 'api', priority: 'P1' })
  await until('the push attempt', async () => (await attempts(alertId)).some((attempt) => attempt.channel === 'push'))
  t.same(
    (await attempts(alertId)).map((attempt) => attempt.channel),
    ['push'],
    'only push at first (it fails: Ada subscribed no browser)',
  )
  t.equal(mailsAbout('API down'), 0)
  await passDelays()
  await until('the e-mail after the delay', () => mailsAbout('API down') === 1)
  t.same((await attempts(alertId)).map((attempt) => attempt.channel).sort(), ['email', 'push'])
})

t.test('an acknowledgement before the delay stops the rule’s later channels', async (t) => {
  const alertId = await fire({ title: 'Queue stalled', service: 'api', priority: 'P2' })
  await until('the push attempt', async () => (await attempts(alertId)).length === 1)
  await call(ada!, 'POST', `${base}/alerts/${alertId}/acknowledge`)
  await passDelays()
  await rulesDone()
  t.equal(mailsAbout('Queue stalled'), 0)
  t.same(
    (await attempts(alertId)).map((attempt) => attempt.channel),
    ['push'],
  )
})

t.test('outside its service’s support hours a P1 is low urgency', async (t) => {
  const now = Date.now()
  const closed = {
    timeZone: 'UTC',
    days: [1, 2, 3, 4, 5, 6, 7],
    start: hhmm(new Date(now + 2 * 3_600_000)),
    end: hhmm(new Date(now + 3 * 3_600_000)),
  }
  t.equal((await call(viewer!, 'PUT', `${base}/support-hours/batch`, closed)).statusCode, 403)
  t.equal((await call(manager!, 'PUT', `${base}/support-hours/batch`, { ...closed, timeZone: 'Mars/Olympus' })).statusCode, 400)
  t.equal((await call(manager!, 'PUT', `${base}/support-hours/batch`, { ...closed, end: closed.start })).statusCode, 400)
  const set = await call(manager!, 'PUT', `${base}/support-hours/batch`, closed)
  t.equal(set.statusCode, 200)
  t.match(set.json(), { service: 'batch', timeZone: 'UTC', start: closed.start, end: closed.end })

  const alertId = await fire({ title: 'Nightly batch failed', service: 'batch', priority: 'P1' })
  await until('the e-mail', () => mailsAbout('Nightly batch failed') === 1)
  t.same(
    (await attempts(alertId)).map((attempt) => attempt.channel),
    ['email'],
    'the low-urgency rule: e-mail at once, no push',
  )

  const open = { ...closed, start: hhmm(new Date(now - 3_600_000)), end: hhmm(new Date(now + 3_600_000)) }
  await call(manager!, 'PUT', `${base}/support-hours/batch`, open)
  const within = await fire({ title: 'Batch slow', service: 'batch', priority: 'P1' })
  await until('the push attempt', async () => (await attempts(within)).length === 1)
  t.same(
    (await attempts(within)).map((attempt) => attempt.channel),
    ['push'],
    'within support hours: high urgency',
  )

  t.match((await call(viewer!, 'GET', `${base}/support-hours`)).json().data, [{ service: 'batch' }])
  t.equal((await call(manager!, 'DELETE', `${base}/support-hours/batch`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${base}/support-hours/batch`)).statusCode, 404)
  const audit = await db.selectFrom('core.auditLogs').select('action').where('organizationId', '=', orgId).execute()
  t.ok(['service_support_hours.set', 'service_support_hours.deleted'].every((action) => audit.some((entry) => entry.action === action)))
})

t.test('without rules, the priority’s channels page at once as before', async (t) => {
  await call(ada!, 'PATCH', '/api/v1/users/me/notifications', { rules: null })
  const alertId = await fire({ title: 'Cache cold', service: 'api', priority: 'P4' })
  await until('the e-mail', () => mailsAbout('Cache cold') === 1)
  t.same(
    (await attempts(alertId)).map((attempt) => attempt.channel),
    ['email'],
  )
})
