import t from 'tap'
import { DEFAULT_AI_CONFIG, DEFAULT_INVESTIGATION_BOUNDS } from '@svc/config'
import { sql } from 'kysely'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { insightsHelpers, minutesAgo } from './insights-setup.js'
import { alertingOrganization } from './organization-setup.js'

// Re-investigations wait a second for more change, not a minute.
const service = await startTestService(t, buildApp, {
  config: { ai: { ...DEFAULT_AI_CONFIG, investigation: { ...DEFAULT_INVESTIGATION_BOUNDS, reinvestigateDebounceSeconds: 1 } } },
})
const { app } = service
const db = app.database.db

const { orgId, otherOrgId, person } = await alertingOrganization(service, 'agents', {
  responder: { alerting: 'responder', insights: 'responder', statuspages: 'manager' },
  viewer: { alerting: 'viewer', insights: 'viewer' },
})
const [owner, responder, viewer, stranger] = ['owner', 'responder', 'viewer', 'stranger'].map(person)
const { createConfig, ingest, deploy, settledAnalyses } = insightsHelpers(service, orgId, owner!)
const base = `/api/v1/organizations/${orgId}`
const call = (
  who: { headers: Record<string, string> },
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
) => app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

let investigated:
  | { incidentId: string; appAlerts: Awaited<ReturnType<typeof createConfig>>; dbAlerts: Awaited<ReturnType<typeof createConfig>> }
  | undefined

const RUNBOOK = `# Inventory database

When reservations fail:

1. Check replication lag on the primary.
2. Revert the last configuration change with \`flagctl revert\`.
- [ ] Tell #inventory what you did.
`

t.test('runbooks are versioned, audited, and scoped to their organization', async (t) => {
  const refused = await call(viewer!, 'POST', `${base}/runbooks`, { title: 'Viewers cannot', body: 'x', services: [] })
  t.equal(refused.statusCode, 403)
  const invalid = await call(responder!, 'POST', `${base}/runbooks`, { title: '', body: 'x', services: ['a', 'a'] })
  t.equal(invalid.statusCode, 400)
  t.equal((await call(owner!, 'GET', `${base}/runbooks`)).json().meta.total, 0, 'nothing was written')

  const created = await call(responder!, 'POST', `${base}/runbooks`, {
    title: 'Inventory DB failing',
    body: 'draft',
    services: ['inventory-db'],
  })
  t.equal(created.statusCode, 201)
  const runbook = created.json()
  t.match(runbook, { version: 1, services: ['inventory-db'], labels: {}, createdBy: responder!.userId })
  const changed = await call(responder!, 'PATCH', `${base}/runbooks/${runbook.id}`, { body: RUNBOOK, labels: { team: 'stock' } })
  t.match(changed.json(), { version: 2, body: RUNBOOK, labels: { team: 'stock' }, title: 'Inventory DB failing' })
  t.equal((await call(responder!, 'PATCH', `${base}/runbooks/${runbook.id}`, {})).statusCode, 400, 'an empty change is refused')

  const versions = (await call(viewer!, 'GET', `${base}/runbooks/${runbook.id}/versions`)).json().data
  t.same(
    versions.map((version: { version: number; body: string }) => [version.version, version.body]),
    [
      [2, RUNBOOK],
      [1, 'draft'],
    ],
  )
  t.same(
    (await call(viewer!, 'GET', `${base}/runbooks?service=inventory-db`)).json().data.map((row: { id: string }) => row.id),
    [runbook.id],
  )
  t.equal((await call(viewer!, 'GET', `${base}/runbooks?service=checkout`)).json().meta.total, 0)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/runbooks/${runbook.id}`)).statusCode, 404)
  t.equal((await call(viewer!, 'GET', `${base}/runbooks/not-a-uuid`)).statusCode, 404)

  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'changes'])
    .where('organizationId', '=', orgId)
    .where('entityId', '=', runbook.id)
    .orderBy('createdAt')
    .execute()
  t.match(audit, [
    { action: 'runbook.created', changes: { after: { title: 'Inventory DB failing', version: 1 } } },
    { action: 'runbook.updated', changes: { before: { version: 1, labels: {} }, after: { version: 2, labels: { team: 'stock' } } } },
  ])

  const doomed = (await call(responder!, 'POST', `${base}/runbooks`, { title: 'Old', body: 'x', services: [] })).json()
  t.equal((await call(responder!, 'DELETE', `${base}/runbooks/${doomed.id}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${base}/runbooks/${doomed.id}`)).statusCode, 404)
})

t.test(
  'after an incident is investigated, the runbook, comms and on-call agents each answer, and a person publishes the draft',
  async (t) => {
    const policy = async (name: string) =>
      (
        await call(owner!, 'POST', `${base}/escalation-policies`, {
          name,
          steps: [{ delayMinutes: 30, targets: [{ type: 'user', id: owner!.userId }] }],
        })
      ).json() as { id: string }
    const dbTeam = await policy('DB team')
    const appTeam = await policy('App team')
    const dbAlerts = await createConfig({ name: 'DB alerts', defaultPriority: 'P3', escalationPolicyId: dbTeam.id })
    const appAlerts = await createConfig({ name: 'App alerts', defaultPriority: 'P2', escalationPolicyId: appTeam.id })
    await call(owner!, 'POST', `${base}/service-dependencies`, { service: 'inventory', dependsOn: 'inventory-db' })
    await ingest(dbAlerts, { title: 'Replication lag on inventory-db', service: 'inventory-db' })
    const change = await deploy(appAlerts, {
      service: 'inventory-db',
      kind: 'config',
      environment: 'production',
      finishedAt: minutesAgo(5),
    })
    const { alertId } = await ingest(appAlerts, {
      title: 'Inventory reservations failing',
      service: 'inventory',
      priority: 'P1',
      labels: { team: 'stock' },
    })
    await settledAnalyses(alertId)
    const { incidentId } = await db
      .selectFrom('divinux.incidentAlerts')
      .select('incidentId')
      .where('alertId', '=', alertId)
      .executeTakeFirstOrThrow()
    investigated = { incidentId, appAlerts, dbAlerts }

    const requested = (await call(responder!, 'POST', `${base}/insights`, { sourceProduct: 'alerting', incidentId })).json()
    const [investigation] = await settledAnalyses(incidentId)
    t.match(investigation, { status: 'completed', suspectedDeployId: change.id })
    const outputs = (await call(viewer!, 'GET', `${base}/insights/${requested.id}/agents`)).json().data as Array<{
      agent: string
      inputs: Record<string, unknown>
      output: Record<string, unknown>
    }>
    t.same(
      outputs.map((output) => output.agent),
      ['comms', 'oncall', 'runbook'],
    )
    const [comms, oncall, runbook] = outputs

    t.match(runbook!.inputs, { investigationId: requested.id, subject: { kind: 'incident', id: incidentId } })
    t.match(runbook!.output, {
      matches: [
        {
          title: 'Inventory DB failing',
          version: 2,
          why: [
            /it is for inventory-db, where the probable cause lies/,
            /labels team=stock match the alert "Inventory reservations failing"/,
          ],
          steps: [
            'Check replication lag on the primary.',
            'Revert the last configuration change with `flagctl revert`.',
            'Tell #inventory what you did.',
          ],
        },
      ],
    })

    const draft = comms!.output as {
      statusPageUpdate: { name: string; status: string; body: string }
      stakeholderSummary: string
      publish: { path: string; body: object }
    }
    t.match(draft.statusPageUpdate, {
      name: /^Problems affecting /,
      status: 'identified',
      body: /a recent configuration change\. We are reverting the change\./,
    })
    t.notMatch(JSON.stringify(draft.statusPageUpdate) + draft.stakeholderSummary, /inventory|flagctl|production/i, 'no internal detail')
    t.match(draft.stakeholderSummary, /^INC-\d+: P1 incident, started \d\d:\d\d UTC, now triage\./)
    t.equal(draft.publish.path, `${base}/incidents/${incidentId}/status-updates`)
    t.equal(
      (
        await db
          .selectFrom('divinux.incidentTimeline')
          .select('id')
          .where('incidentId', '=', incidentId)
          .where('kind', '=', 'status_update')
          .execute()
      ).length,
      0,
      'the agent published nothing',
    )
    const published = await call(responder!, 'POST', draft.publish.path, draft.publish.body)
    t.equal(published.statusCode, 201, published.body)
    t.match(published.json(), {
      kind: 'status_update',
      body: draft.statusPageUpdate.body,
      data: { draftOf: requested.id, statusPages: { name: draft.statusPageUpdate.name } },
    })

    t.match(oncall!.output, {
      lines: [
        /^P1 inventory failing since \d\d:\d\d UTC: /,
        /^Suspect: configuration change of inventory-db to production, \d+ min before · runbook "Inventory DB failing"$/,
      ],
      suggestions: [{ service: 'inventory-db', policyId: dbTeam.id, policyName: 'DB team', why: /whose alerts page "DB team"/ }],
    })
  },
)

t.test(
  'an incident is investigated again when a service joins it and when its suspect deploy is rolled back, once per burst',
  async (t) => {
    const { incidentId, appAlerts, dbAlerts } = investigated!
    const reinvestigations = async (count: number) => {
      const rows = await settledAnalyses(incidentId, count + 1)
      return rows.filter((row) => row.trigger === 'reinvestigation')
    }
    // The database's own alerts join through the dependency map: a service new to the incident.
    await ingest(dbAlerts, { title: 'inventory-db connections refused', service: 'inventory-db', priority: 'P2' })
    await ingest(dbAlerts, { title: 'inventory-db replica down', service: 'inventory-db', priority: 'P2' })
    const [joined] = await reinvestigations(1)
    t.match(joined, { status: 'completed', subject: 'incident', requestedBy: null })
    t.same((joined!.evidence as { dependencies: { affected: string[] } }).dependencies.affected.sort(), ['inventory', 'inventory-db'])

    await deploy(appAlerts, { service: 'inventory-db', kind: 'rollback', environment: 'production' })
    const after = await reinvestigations(2)
    t.equal(after.length, 2, 'the rollback of the suspect asked for one more')
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    t.equal((await reinvestigations(2)).length, 2, 'and no more than that')
  },
)

t.test('pages after the first step carry the on-call brief', async (t) => {
  const policy = await call(owner!, 'POST', `${base}/escalation-policies`, {
    name: 'Two steps',
    steps: [
      { delayMinutes: 5, targets: [{ type: 'user', id: owner!.userId }] },
      { delayMinutes: 5, targets: [{ type: 'user', id: owner!.userId }] },
    ],
  })
  const pager = await createConfig({ name: 'Ledger pager', defaultPriority: 'P1', escalationPolicyId: policy.json().id })
  const { alertId } = await ingest(pager, { title: 'Ledger writes failing', service: 'ledger' })
  await settledAnalyses(alertId)
  const pages = () =>
    db
      .selectFrom('core.outbox')
      .select(['bodyText', 'channel'])
      .where('kind', '=', 'alert.page')
      .where('bodyText', 'like', '%Ledger writes failing%')
      .where('channel', '=', 'email')
      .orderBy('createdAt')
      .execute()
  const deadline = Date.now() + 20_000
  while ((await pages()).length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  await sql`update pgboss.job set start_after = now() where name = 'alerting.escalation-step' and state in ('created', 'retry')`.execute(db)
  while ((await pages()).length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  const [first, second] = await pages()
  t.notMatch(first!.bodyText, /failing since/, 'the first page went out at once')
  t.match(
    second!.bodyText,
    /^\[P1\] Ledger writes failing\n\nP1 ledger failing since \d\d:\d\d UTC: Ledger writes failing\nNo suspect change · no runbook matched\n/,
  )
})

t.test('agents are switched per organization; with the investigator off, alerts are not investigated automatically', async (t) => {
  t.same((await call(viewer!, 'GET', `${base}/insights/agents`)).json(), { investigator: true, runbook: true, comms: true, oncall: true })
  const off = { investigator: false, runbook: false, comms: true, oncall: false }
  t.equal((await call(responder!, 'PUT', `${base}/insights/agents`, off)).statusCode, 403, 'a manager decides')
  t.equal((await call(owner!, 'PUT', `${base}/insights/agents`, { investigator: false })).statusCode, 400)
  t.same((await call(owner!, 'PUT', `${base}/insights/agents`, off)).json(), off)
  t.same((await call(viewer!, 'GET', `${base}/insights/agents`)).json(), off)
  t.match(await db.selectFrom('core.auditLogs').select(['action', 'changes']).where('entityType', '=', 'agent_settings').execute(), [
    { action: 'agent_settings.updated', changes: { before: { investigator: true }, after: { investigator: false } } },
  ])

  const pager = await createConfig({ name: 'Pager', defaultPriority: 'P1' })
  const { alertId } = await ingest(pager, { title: 'Search is down', service: 'search' })
  // The insights surface reads each new alert from its queue (`insights.alert-created`) and decides there.
  await until('the insights surface to have read the alert', async () => {
    const { rows } = await sql<{ state: string }>`
      select state from pgboss.job where name = 'insights.alert-created' and data ->> 'alertId' = ${alertId}`.execute(db)
    return rows[0]?.state === 'completed'
  })
  t.same(await db.selectFrom('divinux.analyses').select('id').where('incidentId', '=', alertId).execute(), [], 'no automatic investigation')

  const asked = (await call(responder!, 'POST', `${base}/insights`, { sourceProduct: 'alerting', incidentId: alertId })).json()
  // The P1 opened an incident: the analysis asked for its alert is the incident's.
  t.not(asked.incidentId, alertId, 'kept under the incident the alert is in')
  await settledAnalyses(asked.incidentId)
  const agents = (await call(viewer!, 'GET', `${base}/insights/${asked.id}/agents`)).json().data
  t.same(
    agents.map((output: { agent: string }) => output.agent),
    ['comms'],
    'only the agents left on answer',
  )
  t.match(
    (agents[0].output as { publish: unknown }).publish,
    { method: 'POST', path: `/api/v1/organizations/${orgId}/incidents/${asked.incidentId}/status-updates`, body: { draftOf: asked.id } },
    'the incident’s status update, for a person to publish',
  )
  t.equal((await call(viewer!, 'GET', `${base}/insights/${otherOrgId}/agents`)).statusCode, 404)
})
