import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { insightsHelpers, minutesAgo } from './insights-setup.js'
import { alertingOrganization } from './organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const { orgId, otherOrgId, person } = await alertingOrganization(service, 'insights', {
  responder: { alerting: 'viewer', insights: 'responder' },
  viewer: { alerting: 'viewer', insights: 'viewer' },
  bystander: null,
})
const [owner, responder, viewer, bystander, stranger] = ['owner', 'responder', 'viewer', 'bystander', 'stranger'].map(person)
const { createConfig, ingest, deploy, settledAnalyses, queueDrained } = insightsHelpers(service, orgId, owner!)
const insightsUrl = `/api/v1/organizations/${orgId}/insights`

function alertmanager(
  status: 'firing' | 'resolved',
  alertname: string,
  severity: string,
  service = 'checkout',
  startsAt = minutesAgo(0),
  labels: Record<string, string> = {},
) {
  return {
    version: '4',
    groupKey: `{}:{alertname="${alertname}"}`,
    status,
    receiver: 'incident-platform',
    commonLabels: { alertname, service },
    commonAnnotations: {},
    alerts: [
      {
        status,
        labels: { alertname, severity, ...labels },
        annotations: { summary: `${alertname} on ${service}` },
        startsAt,
        fingerprint: `fp-${alertname}`,
      },
    ],
  }
}

const prometheus = await createConfig({ name: 'Prometheus', format: 'alertmanager' })

t.test('a P1 from Alertmanager gets an analysis that names the deploy before it; its repeats and resolve do not', async (t) => {
  const earlier = await deploy(prometheus, {
    service: 'checkout',
    environment: 'production',
    version: '2.3.9',
    commit: 'aaa111',
    status: 'success',
    finishedAt: minutesAgo(180),
  })
  const culprit = await deploy(prometheus, {
    service: 'checkout',
    environment: 'production',
    version: '2.4.0',
    commit: '9f8e7d6c5b4a',
    status: 'success',
    finishedAt: minutesAgo(12),
  })
  await deploy(prometheus, { service: 'search', version: '7.1.0', status: 'success', finishedAt: minutesAgo(5) })

  const created = await ingest(prometheus, alertmanager('firing', 'CheckoutErrors', 'critical'))
  t.equal(created.status, 'created')
  const [analysis] = await settledAnalyses(created.alertId)
  t.match(analysis, {
    status: 'completed',
    trigger: 'automatic',
    requestedBy: null,
    sourceProduct: 'alerting',
    severity: 'critical',
    provider: 'offline',
    suspectedDeployId: culprit.id,
    attempts: 1,
  })
  t.match(analysis!.rootCause, /deploy 2\.4\.0 of checkout \(commit 9f8e7d6c5b4a\) to production/)
  t.match(analysis!.recommendations, /^- Roll back checkout to the version before 2\.4\.0/)
  const findings = analysis!.findings as {
    suspectDeploys: Array<{ deployId: string; reasons: string[] }>
    probableCause: { category: string; service: string }
    evidence: Array<{ claim: string; resources: Array<{ type: string; id: string }> }>
  }
  t.same(
    findings.suspectDeploys.map((suspect) => suspect.deployId),
    [culprit.id],
    'the deploy it replaced and the other service’s deploy are not suspects',
  )
  t.match(findings.probableCause, { category: 'deploy', service: 'checkout' })
  const ruledOut = findings.evidence.find((item) => item.claim.startsWith('Ruled out'))!
  t.ok(ruledOut.resources.some((resource) => resource.id === earlier.id))
  t.match(ruledOut.claim, /deploy 2\.3\.9 of checkout .*replaced by 2\.4\.0 before the onset/)

  const body = (await app.inject({ method: 'GET', url: `${insightsUrl}/${analysis!.id}`, headers: viewer!.headers })).json()
  t.match(body, {
    id: analysis!.id,
    status: 'completed',
    incidentId: created.alertId,
    severity: 'critical',
    tokens: { prompt: 0, completion: 0 },
    suspectedDeployId: culprit.id,
  })
  const events = (await app.inject({ method: 'GET', url: `${insightsUrl}/${analysis!.id}/events`, headers: viewer!.headers })).json().data
  t.same(
    events.map((event: { type: string }) => event.type),
    ['requested', 'processing', ...Array(8).fill('step'), 'completed'],
  )
  const steps = events
    .filter((event: { type: string }) => event.type === 'step')
    .map((event: { data: { tool: string | null } }) => event.data.tool)
  t.same(
    steps,
    [
      'get_service_dependencies',
      'get_alert_timelines',
      'get_deploys',
      'get_config_changes',
      'get_check_results',
      'get_status_components',
      'get_similar_incidents',
      null,
    ],
    'the offline planner calls every tool in its documented order, then answers',
  )

  const room = (
    await app.inject({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/alerts/${created.alertId}/command-room`,
      headers: viewer!.headers,
    })
  ).json()
  t.match(room.analysis, { id: analysis!.id, status: 'completed', suspectedDeployId: culprit.id })
  t.equal(room.deploys[0].id, culprit.id)

  t.equal((await ingest(prometheus, alertmanager('firing', 'CheckoutErrors', 'critical'))).status, 'deduplicated')
  t.equal((await ingest(prometheus, alertmanager('resolved', 'CheckoutErrors', 'critical'))).status, 'resolved')
  await queueDrained()
  t.equal((await settledAnalyses(created.alertId)).length, 1, 'one analysis per alert')
})

t.test('lower priorities are analyzed only when their config asks for it', async (t) => {
  const warning = await ingest(prometheus, alertmanager('firing', 'DiskFilling', 'warning'))
  await queueDrained()
  t.equal(
    (await db.selectFrom('divinux.analyses').select('id').where('incidentId', '=', warning.alertId).execute()).length,
    0,
    'a P3 from a plain config',
  )

  const watched = await createConfig({ name: 'Watched', format: 'generic', autoAnalysis: true, defaultPriority: 'P4' })
  const low = await ingest(watched, { title: 'Queue depth above 1000', service: 'billing' })
  const [analysis] = await settledAnalyses(low.alertId)
  t.match(analysis, { status: 'completed', trigger: 'automatic', severity: 'low', suspectedDeployId: null })
  t.match(analysis!.findings, { probableCause: { category: 'capacity' }, suspectDeploys: [] })
  t.match(analysis!.rootCause, /queue depth.*No deploy or configuration change on billing or to what it depends on points at it/)
})

t.test('alerts ingested together, so written in batches with their announcements: each P1 and P2 is analyzed once', async (t) => {
  const burst = await createConfig({ name: 'Burst', format: 'generic', defaultPriority: 'P3' })
  const priorities = ['P1', 'P3', 'P2', 'P4', 'P1', 'P3']
  const alerts = await Promise.all(
    priorities.map((priority, index) => ingest(burst, { title: `Burst ${index}`, service: `burst-${index}`, priority })),
  )
  for (const [index, alert] of alerts.entries())
    if (priorities[index] === 'P1' || priorities[index] === 'P2') t.equal((await settledAnalyses(alert.alertId)).length, 1)
  await queueDrained()
  const analyzed = await db
    .selectFrom('divinux.analyses')
    .select('incidentId')
    .where(
      'incidentId',
      'in',
      alerts.map((alert) => alert.alertId),
    )
    .execute()
  t.equal(analyzed.length, 3, 'the P3 and P4 alerts are not analyzed')
})

t.test('a past resolved incident that looks alike is recalled with its root cause', async (t) => {
  const first = await ingest(prometheus, alertmanager('firing', 'PaymentsLatency', 'critical', 'payments'))
  await settledAnalyses(first.alertId)
  await ingest(prometheus, alertmanager('resolved', 'PaymentsLatency', 'critical', 'payments'))
  const again = await ingest(prometheus, alertmanager('firing', 'PaymentsLatency', 'critical', 'payments'))
  t.not(again.alertId, first.alertId)
  const [analysis] = await settledAnalyses(again.alertId)
  const evidence = analysis!.evidence as { similar: Array<{ id: string; kind: string; similarity: number; rootCause: string | null }> }
  t.match(evidence.similar[0], { id: first.alertId, kind: 'alert', similarity: 1 })
  t.match(analysis!.rootCause, /resembles the resolved alert "PaymentsLatency on payments" \(similarity 1\.00\)\. Its root cause then: /)
})

t.test('a manual request is queued, one at a time per incident', async (t) => {
  const generic = await createConfig({ name: 'Generic', defaultPriority: 'P3' })
  const { alertId } = await ingest(generic, { title: 'Cache hit ratio dropped', service: 'catalog' })
  const request = () =>
    app.inject({
      method: 'POST',
      url: insightsUrl,
      headers: responder!.headers,
      payload: { incidentId: alertId, sourceProduct: 'alerting' },
    })

  // An analysis someone else's worker is processing right now.
  const active = await db
    .insertInto('divinux.analyses')
    .values({ organizationId: orgId, sourceProduct: 'alerting', incidentId: alertId, trigger: 'manual', status: 'processing' })
    .returning('id')
    .executeTakeFirstOrThrow()
  const refused = await request()
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { code: 'CONFLICT', message: `the incident already has an active analysis (${active.id})` })
  t.equal((await db.selectFrom('divinux.analyses').select('id').where('incidentId', '=', alertId).execute()).length, 1, 'nothing added')

  await db.updateTable('divinux.analyses').set({ status: 'failed' }).where('id', '=', active.id).execute()
  const accepted = await request()
  t.equal(accepted.statusCode, 202)
  t.match(accepted.json(), {
    status: 'pending',
    trigger: 'manual',
    requestedBy: responder!.userId,
    incidentId: alertId,
    sourceProduct: 'alerting',
    summary: null,
    severity: null,
  })
  const settled = await settledAnalyses(alertId, 2)
  t.match(
    settled.find((row) => row.id === accepted.json().id),
    { status: 'completed', severity: 'medium' },
  )
})

t.test('manual requests that cannot be served change nothing', async (t) => {
  const theirs = await db
    .insertInto('divinux.alerts')
    .values({ organizationId: otherOrgId, source: 'generic', title: 'theirs', priority: 'P3', fingerprint: 'theirs' })
    .returning('id')
    .executeTakeFirstOrThrow()
  const count = async () =>
    Number(
      (
        await db
          .selectFrom('divinux.analyses')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  const before = await count()
  const post = (who: { headers: { authorization: string } }, payload: unknown, url = insightsUrl) =>
    app.inject({ method: 'POST', url, headers: who.headers, payload: payload as object })
  const cases: Array<[string, ReturnType<typeof post>, number, string]> = [
    ["another organization's alert", post(responder!, { incidentId: theirs.id, sourceProduct: 'alerting' }), 404, 'NOT_FOUND'],
    [
      'an unknown alert',
      post(responder!, { incidentId: '00000000-0000-4000-8000-000000000000', sourceProduct: 'alerting' }),
      404,
      'NOT_FOUND',
    ],
    ['a surface with no such incident', post(responder!, { incidentId: theirs.id, sourceProduct: 'synthetics' }), 404, 'NOT_FOUND'],
    ['an unknown surface', post(responder!, { incidentId: theirs.id, sourceProduct: 'billing' }), 400, 'VALIDATION_FAILED'],
    ['a malformed incident id', post(responder!, { incidentId: 'alert-1', sourceProduct: 'alerting' }), 400, 'VALIDATION_FAILED'],
    ['an unknown field', post(responder!, { incidentId: theirs.id, sourceProduct: 'alerting', model: 'gpt-5' }), 400, 'VALIDATION_FAILED'],
    ['an insights viewer', post(viewer!, { incidentId: theirs.id, sourceProduct: 'alerting' }), 403, 'FORBIDDEN'],
    ['a member with no insights role', post(bystander!, { incidentId: theirs.id, sourceProduct: 'alerting' }), 403, 'FORBIDDEN'],
    ['a stranger', post(stranger!, { incidentId: theirs.id, sourceProduct: 'alerting' }), 404, 'NOT_FOUND'],
  ]
  for (const [name, response, status, code] of cases) {
    const answer = await response
    t.equal(answer.statusCode, status, name)
    t.equal(answer.json().code, code, name)
  }
  t.equal(await count(), before)
})

t.test('analyses are listed, filtered, counted, and private to their organization', async (t) => {
  await queueDrained()
  const all = (await app.inject({ method: 'GET', url: `${insightsUrl}?limit=100`, headers: viewer!.headers })).json()
  t.ok(all.meta.total >= 5)
  t.ok(all.data.every((row: { organizationId: string }) => row.organizationId === orgId))
  const critical = (
    await app.inject({
      method: 'GET',
      url: `${insightsUrl}?severity=critical&status=completed&sourceProduct=alerting`,
      headers: viewer!.headers,
    })
  ).json()
  t.ok(critical.data.length >= 1)
  t.ok(critical.data.every((row: { severity: string }) => row.severity === 'critical'))
  const paged = (await app.inject({ method: 'GET', url: `${insightsUrl}?limit=2&page=2`, headers: viewer!.headers })).json()
  t.same(paged.meta, { page: 2, limit: 2, total: all.meta.total })
  t.same(
    paged.data.map((row: { id: string }) => row.id),
    all.data.slice(2, 4).map((row: { id: string }) => row.id),
  )

  const stats = (await app.inject({ method: 'GET', url: `${insightsUrl}/stats`, headers: viewer!.headers })).json()
  t.equal(stats.total, all.meta.total)
  t.same(stats.byStatus, { pending: 0, processing: 0, completed: all.meta.total - 1, failed: 1 }, 'the one set to failed above')
  t.equal(stats.bySeverity.critical + stats.bySeverity.high + stats.bySeverity.medium + stats.bySeverity.low, all.meta.total - 1)
  t.ok(stats.meanSecondsToCompletion > 0)
  t.same(stats.tokens, { prompt: 0, completion: 0, total: 0 }, 'the offline analyzer spends no tokens')
  const future = (
    await app.inject({ method: 'GET', url: `${insightsUrl}/stats?from=2100-01-01T00:00:00Z`, headers: viewer!.headers })
  ).json()
  t.match(future, { total: 0, meanSecondsToCompletion: null })

  const [one] = all.data as Array<{ id: string }>
  const theirUrl = `/api/v1/organizations/${otherOrgId}/insights/${one!.id}`
  t.equal((await app.inject({ method: 'GET', url: theirUrl, headers: stranger!.headers })).statusCode, 404, "another organization's id")
  t.equal((await app.inject({ method: 'GET', url: `${theirUrl}/events`, headers: stranger!.headers })).statusCode, 404)
  t.equal(
    (await app.inject({ method: 'GET', url: `${insightsUrl}/${one!.id}`, headers: stranger!.headers })).statusCode,
    404,
    'not a member',
  )
  t.equal((await app.inject({ method: 'GET', url: `${insightsUrl}/not-a-uuid`, headers: viewer!.headers })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: insightsUrl, headers: bystander!.headers })).statusCode, 403, 'no insights role')
  t.equal((await app.inject({ method: 'GET', url: `${insightsUrl}?status=done`, headers: viewer!.headers })).statusCode, 400)
})

t.test('an incident is investigated as a whole: its alerts, their services and what they depend on', async (t) => {
  const generic = await createConfig({ name: 'Incident sources', defaultPriority: 'P2' })
  const dependency = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/service-dependencies`,
    headers: owner!.headers,
    payload: { service: 'inventory', dependsOn: 'inventory-db' },
  })
  t.equal(dependency.statusCode, 201)
  const migration = await deploy(generic, { service: 'inventory-db', kind: 'config', environment: 'production', finishedAt: minutesAgo(6) })
  await deploy(generic, { service: 'inventory', version: '5.0.0', environment: 'staging', finishedAt: minutesAgo(2) })
  const { alertId } = await ingest(generic, { title: 'Inventory reservations failing', service: 'inventory', priority: 'P1' })
  await settledAnalyses(alertId)
  // Correlation and the alert's analysis run side by side: either may finish first.
  const link = await until('the alert to join an incident', () =>
    db.selectFrom('divinux.incidentAlerts').select('incidentId').where('alertId', '=', alertId).executeTakeFirst(),
  )

  const requested = await app.inject({
    method: 'POST',
    url: insightsUrl,
    headers: responder!.headers,
    payload: { incidentId: link.incidentId, sourceProduct: 'alerting' },
  })
  t.equal(requested.statusCode, 202)
  t.match(requested.json(), { subject: 'incident', incidentId: link.incidentId, status: 'pending' })
  const [investigation] = await settledAnalyses(link.incidentId)
  t.match(investigation, { status: 'completed', subject: 'incident', suspectedDeployId: migration.id })
  t.match(investigation!.findings, {
    suspectDeploys: [
      {
        deployId: migration.id,
        service: 'inventory-db',
        reasons: [/6 minutes/, /a failing service depends on inventory-db/, /configuration change/],
      },
    ],
    probableCause: { category: 'configuration', service: 'inventory-db' },
  })
  t.match(investigation!.summary, /^P1 incident INC-\d+ "Inventory reservations failing" on inventory began at/)
  const gathered = investigation!.evidence as {
    dependencies: { dependsOn: string[] }
    deploys: Array<{ environment: string; score: number }>
  }
  t.same(gathered.dependencies.dependsOn, ['inventory-db'])
  const staging = gathered.deploys.find((row) => row.environment === 'staging')
  t.ok(staging && staging.score < 0.3, 'the staging release is weighed, and ruled out')
})

t.test('an alert is dated by when it began, not when it arrived, and deploys elsewhere are not blamed', async (t) => {
  // Alertmanager delivers 15 minutes after the problem began (its group_wait and a retry): a deploy
  // in between came after the onset. The alerts are in staging: the production deploy of an hour
  // ago is not where they fail.
  const production = await deploy(prometheus, {
    service: 'ledger',
    environment: 'production',
    version: '9.0.0',
    finishedAt: minutesAgo(60),
  })
  const staging = await deploy(prometheus, { service: 'ledger', environment: 'staging', version: '9.1.0-rc1', finishedAt: minutesAgo(25) })
  const late = await deploy(prometheus, { service: 'ledger', environment: 'staging', version: '9.1.0-rc2', finishedAt: minutesAgo(8) })
  const startsAt = minutesAgo(15)
  const created = await ingest(
    prometheus,
    alertmanager('firing', 'LedgerDiskFull', 'critical', 'ledger', startsAt, { environment: 'staging' }),
  )
  t.equal(created.status, 'created')
  const alert = await db
    .selectFrom('divinux.alerts')
    .select(['startedAt', 'firstSeenAt'])
    .where('id', '=', created.alertId)
    .executeTakeFirstOrThrow()
  t.equal(alert.startedAt?.toISOString(), startsAt, 'the alert keeps when it began')
  const [analysis] = await settledAnalyses(created.alertId)
  t.match(analysis, { status: 'completed', suspectedDeployId: staging.id })
  const gathered = analysis!.evidence as { deploys: Array<{ id: string; score: number; reasons: string[] }> }
  t.match(
    gathered.deploys.find((row) => row.id === late.id),
    { score: 0, reasons: [/after the onset: it cannot have caused it/] },
  )
  const inProduction = gathered.deploys.find((row) => row.id === production.id)
  t.ok(inProduction && inProduction.score < 0.3, 'the production deploy is weighed, and ruled out')
  t.match(inProduction?.reasons, [/./, /./, /to production, while the alerts are in staging/])
})

t.test('a deploy of a service is suspected for an alert carrying another of its catalog names', async (t) => {
  const registered = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/services`,
    headers: owner!.headers,
    payload: { key: 'billing', aliases: ['svc-billing'] },
  })
  t.equal(registered.statusCode, 201, registered.body)
  const generic = await createConfig({ name: 'Billing alerts', defaultPriority: 'P1' })
  const change = await deploy(generic, { service: 'billing', environment: 'production', version: '3.2.0', finishedAt: minutesAgo(4) })
  const { alertId } = await ingest(generic, { title: 'Invoices fail to render', service: 'svc-billing', priority: 'P1' })
  const [analysis] = await settledAnalyses(alertId)
  t.match(analysis, { status: 'completed', suspectedDeployId: change.id }, 'svc-billing and billing are one service')
})

t.test('the alert timelines tool tells which labels a repeat changed', async (t) => {
  const generic = await createConfig({ name: 'Label moves', defaultPriority: 'P3' })
  const fired = { title: 'Worker restarting', service: 'jobs', fingerprint: 'worker-restarting' }
  const { alertId } = await ingest(generic, { ...fired, labels: { pod: 'jobs-1', zone: 'a', canary: 'yes' } })
  t.equal((await ingest(generic, { ...fired, labels: { pod: 'jobs-7', zone: 'a', region: 'eu' } })).status, 'deduplicated')
  const requested = await app.inject({
    method: 'POST',
    url: insightsUrl,
    headers: responder!.headers,
    payload: { incidentId: alertId, sourceProduct: 'alerting' },
  })
  t.equal(requested.statusCode, 202)
  const [analysis] = await settledAnalyses(alertId)
  const { alerts } = analysis!.evidence as { alerts: Array<{ occurrences: number; labelChanges: unknown[] }> }
  t.match(alerts[0], { occurrences: 2 })
  t.same(alerts[0]!.labelChanges, [
    { key: 'pod', from: 'jobs-1', to: 'jobs-7' },
    { key: 'canary', from: 'yes', to: null },
    { key: 'region', from: null, to: 'eu' },
  ])
})
