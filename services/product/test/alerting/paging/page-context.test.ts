import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// A page helps the person paged (decision 0014, "What a page says"): the incident it belongs to,
// the sender's runbook and its own view of the problem, the labels; links only when they are
// http(s). Whoever was paged is told when the alert resolves, unless they said not to.

const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Paging <paging@example.com>' },
    productLinkBase: 'https://product.example',
  },
})
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'page-context', { ada: 'responder' })
const [owner, ada] = ['owner', 'ada'].map(person)
const db = app.database.db
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const policy = (
  await call(owner!, 'POST', `${base}/escalation-policies`, {
    name: 'Checkout',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] }],
  })
).json()
const config = (
  await call(owner!, 'POST', `${base}/webhooks`, { name: 'Prometheus', format: 'alertmanager', escalationPolicyId: policy.id })
).json()
const deliver = (alerts: object[]) =>
  app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ version: '4', status: 'firing', groupKey: '{}:{alertname="CheckoutErrors"}', alerts }),
  })

t.test('an Alertmanager page carries its incident, runbook, link back and labels', async (t) => {
  const delivered = await deliver([
    {
      status: 'firing',
      labels: { alertname: 'CheckoutErrors', severity: 'critical', service: 'checkout', instance: 'checkout-1:9090' },
      annotations: {
        summary: 'Checkout 5xx above 5%',
        description: '7.2% of checkout requests fail.',
        runbook_url: 'https://runbooks.example/checkout-errors',
      },
      startsAt: new Date().toISOString(),
      generatorURL: 'http://prometheus.example:9090/graph?g0.expr=rate%28http_5xx%5B5m%5D%29',
      fingerprint: 'c0ffee',
    },
  ])
  t.equal(delivered.statusCode, 202)
  const alertId = delivered.json().alertId as string
  const alert = (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json()
  t.match(alert, {
    runbookUrl: 'https://runbooks.example/checkout-errors',
    sourceUrl: 'http://prometheus.example:9090/graph?g0.expr=rate%28http_5xx%5B5m%5D%29',
  })
  const incident = await until(
    'the incident the P1 opened',
    async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident,
  )
  const { number } = (await call(ada!, 'GET', `${base}/incidents/${incident.id}`)).json()

  const mail = await until('the page e-mail', () => smtp.received.find((received) => received.subject === '[P1] Checkout 5xx above 5%'))
  t.match(mail.text, `Incident: INC-${number} "Checkout 5xx above 5%" (`)
  t.match(mail.text, `https://product.example/api/v1/organizations/${orgId}/incidents/${incident.id}`)
  t.match(mail.text, 'Runbook: https://runbooks.example/checkout-errors')
  t.match(mail.text, 'In the source: http://prometheus.example:9090/graph?g0.expr=rate%28http_5xx%5B5m%5D%29')
  t.match(mail.text, /Labels:\n {2}alertname=CheckoutErrors\n {2}instance=checkout-1:9090\n {2}service=checkout\n {2}severity=critical/)
  t.match(mail.text, '7.2% of checkout requests fail.')
})

t.test('pages started together each name their own incident and their own service from the catalog', async (t) => {
  const team = (await call(owner!, 'POST', `${base}/teams`, { name: 'Ledger team' })).json()
  const registered = await call(owner!, 'POST', `${base}/services`, {
    key: 'ledger',
    ownerTeamId: team.id,
    tier: 2,
    links: { runbook: 'https://runbooks.example/ledger' },
    aliases: ['ledger-api'],
  })
  t.equal(registered.statusCode, 201, registered.body)
  // One delivery: both alerts are fired in one statement and their escalations started in one
  // batch, whose incidents and catalog entries are read together (decision 0014, "Paging people").
  const firing = (service: string, summary: string) => ({
    status: 'firing',
    labels: { alertname: summary, severity: 'critical', service },
    annotations: { summary },
    fingerprint: `together-${service}`,
  })
  t.equal((await deliver([firing('ledger-api', 'Ledger lagging'), firing('search-index', 'Search index stale')])).statusCode, 202)
  const mails = await until('both pages', () => {
    const found = ['[P1] Ledger lagging', '[P1] Search index stale'].map((subject) =>
      smtp.received.find((received) => received.subject === subject),
    )
    return found.every(Boolean) && found
  })
  const incidents = await db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.alerts as a', 'a.id', 'l.alertId')
    .innerJoin('divinux.incidents as i', 'i.id', 'l.incidentId')
    .select(['a.service', 'i.number'])
    .where('a.organizationId', '=', orgId)
    .where('a.service', 'in', ['ledger-api', 'search-index'])
    .execute()
  const numberOf = new Map(incidents.map((row) => [row.service, row.number]))
  t.not(numberOf.get('ledger-api'), numberOf.get('search-index'), 'two incidents')
  const [ledger, search] = mails as Array<{ text: string }>
  t.match(ledger!.text, `Incident: INC-${numberOf.get('ledger-api')} "Ledger lagging"`)
  t.match(ledger!.text, /^Service: ledger-api \(owned by Ledger team, tier 2\)$/m)
  t.match(ledger!.text, /^Runbook: https:\/\/runbooks\.example\/ledger$/m)
  t.match(search!.text, `Incident: INC-${numberOf.get('search-index')} "Search index stale"`)
  t.match(search!.text, /^Service: search-index$/m, 'a name the catalog does not know says nothing more')
  t.notMatch(search!.text, /Runbook:/)
})

t.test('a link that is not http(s) is not kept, and not sent to anyone', async (t) => {
  const delivered = await deliver([
    {
      status: 'firing',
      labels: { alertname: 'Odd', severity: 'warning' },
      annotations: { summary: 'Odd links', runbook_url: 'javascript:alert(1)' },
      generatorURL: '/relative/graph',
      fingerprint: 'odd',
    },
  ])
  const alertId = delivered.json().alertId as string
  t.match((await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json(), { runbookUrl: null, sourceUrl: null })
})

// Each its own service, so each opens its own incident and pages (the first test's incident is still open).
const resolution = (fingerprint: string, alertname: string) => ({
  status: 'resolved',
  labels: { alertname, severity: 'critical', service: fingerprint },
  annotations: { summary: alertname },
  fingerprint,
})
/** Once the alert's resolution went through the event bus (its subscribers have acted on it). */
const resolutionDispatched = (alertId: string) =>
  until('the resolution dispatched', async () => {
    const row = await db
      .selectFrom('divinux.alertEvents')
      .select('dispatchedAt')
      .where('alertId', '=', alertId)
      .where('type', '=', 'resolved')
      .executeTakeFirst()
    return row?.dispatchedAt ?? undefined
  })

t.test('whoever was paged is told when the alert resolves, unless they turned it off', async (t) => {
  const fired = await deliver([{ ...resolution('told', 'Payments slow'), status: 'firing', annotations: { summary: 'Payments slow' } }])
  const alertId = fired.json().alertId as string
  await until('the page', () => smtp.received.find((received) => received.subject === '[P1] Payments slow'))
  await deliver([resolution('told', 'Payments slow')])
  const notice = await until('the resolved notice', () =>
    smtp.received.find((received) => received.subject === 'Resolved: [P1] Payments slow'),
  )
  t.same(notice.envelopeTo, ['ada@page-context.example'])
  t.match(notice.text, /It resolved at \S+, by its source \(alertmanager\)\./)
  t.match(notice.text, /Incident: INC-\d+: https:\/\/product\.example\/api\/v1\/organizations\//)
  t.match(notice.text, `https://product.example/api/v1/organizations/${orgId}/alerts/${alertId}`)

  const off = await call(ada!, 'PATCH', '/api/v1/users/me/notifications', { whenResolved: false })
  t.equal(off.statusCode, 200)
  t.equal(off.json().whenResolved, false)
  const quiet = await deliver([{ ...resolution('untold', 'Search slow'), status: 'firing', annotations: { summary: 'Search slow' } }])
  const quietId = quiet.json().alertId as string
  await until('the second page', () => smtp.received.find((received) => received.subject === '[P1] Search slow'))
  await deliver([resolution('untold', 'Search slow')])
  await resolutionDispatched(quietId)
  t.same(
    await db.selectFrom('core.outbox').select('subject').where('kind', '=', 'alert.resolved').execute(),
    [{ subject: 'Resolved: [P1] Payments slow' }],
    'no notice for the alert resolved after she turned them off',
  )
})
