import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Severities an organization names, describes and orders (issue 56; decision 0031,
// "Severities"): the defaults until it sets its own; every place a severity is set takes only
// the organization's; alerts open incidents and responder requests page by each severity's
// priority; a severity incidents have cannot be dropped.

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'severities', {
  manager: 'manager',
  ada: 'responder',
  viewer: 'viewer',
})
const [manager, ada, viewer] = ['manager', 'ada', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const severities = async (org = orgId, who: Who = viewer!) =>
  (await call(who, 'GET', `/api/v1/organizations/${org}/incident-severities`)).json() as {
    custom: boolean
    data: Array<{ key: string; name: string; priority: string; rank: number }>
  }

const custom = [
  { key: 'critical', name: 'Critical', description: 'Everyone is affected.', priority: 'P1' },
  { key: 'SEV2', name: 'Serious', priority: 'P3' },
  { key: 'minor', name: 'Minor', priority: 'P3' },
  { key: 'cosmetic', name: 'Cosmetic', priority: 'P4' },
]

t.test('an organization has SEV1 to SEV4 until it sets its own', async (t) => {
  const defaults = await severities()
  t.equal(defaults.custom, false)
  t.same(
    defaults.data.map(({ key, name, priority, rank }) => [key, name, priority, rank]),
    [
      ['SEV1', 'Critical', 'P1', 1],
      ['SEV2', 'Major', 'P2', 2],
      ['SEV3', 'Minor', 'P3', 3],
      ['SEV4', 'Low', 'P4', 4],
    ],
  )
})

t.test('severities are replaced as one ordered list, checked, and never dropped while incidents have them', async (t) => {
  const declared = await call(ada!, 'POST', `${base}/incidents`, { title: 'Slow search', severity: 'SEV2' })
  t.equal(declared.statusCode, 201)
  const refusals: Array<[Who, object, number, RegExp]> = [
    [viewer!, { severities: custom }, 403, /./],
    [manager!, { severities: custom.slice(0, 1) }, 400, /severities must NOT have fewer than 2 items/],
    [
      manager!,
      { severities: [...custom, { key: 'Minor', name: 'Again', priority: 'P3' }] },
      400,
      /severities\/4\/key names Minor a second time/,
    ],
    [manager!, { severities: [{ ...custom[0]!, priority: 'P5' }, custom[1]] }, 400, /priority/],
    [manager!, { severities: [{ ...custom[0]!, key: 'no spaces' }, custom[1]] }, 400, /key/],
    [
      manager!,
      { severities: custom.filter((severity) => severity.key !== 'SEV2') },
      409,
      /^SEV2 is the severity of 1 incident\(s\): keep it, or change their severity first/,
    ],
  ]
  for (const [who, payload, status, message] of refusals) {
    const refused = await call(who, 'PUT', `${base}/incident-severities`, payload)
    t.equal(refused.statusCode, status, JSON.stringify(payload))
    t.match(refused.json().message, message)
  }
  t.equal((await severities()).custom, false, 'nothing was changed')

  const replaced = await call(manager!, 'PUT', `${base}/incident-severities`, { severities: custom })
  t.equal(replaced.statusCode, 200)
  t.same(
    (await severities()).data.map(({ key, rank }) => `${rank}:${key}`),
    ['1:critical', '2:SEV2', '3:minor', '4:cosmetic'],
  )
  t.equal((await severities(otherOrgId, person('stranger'))).custom, false, 'another organization keeps its own')
  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'actorUserId'])
    .where('organizationId', '=', orgId)
    .where('action', '=', 'incident_severities.replaced')
    .execute()
  t.same(audit, [{ action: 'incident_severities.replaced', actorUserId: manager!.userId }])
})

t.test('incidents take only the organization’s severities, in any letter case', async (t) => {
  const refused = await call(ada!, 'POST', `${base}/incidents`, { title: 'Outage', severity: 'SEV1' })
  t.equal(refused.statusCode, 400)
  t.equal(refused.json().message, 'body/severity is not a severity of this organization: one of critical, SEV2, minor, cosmetic')
  const declared = await call(ada!, 'POST', `${base}/incidents`, { title: 'Outage', severity: 'CRITICAL' })
  t.equal(declared.statusCode, 201)
  t.equal(declared.json().severity, 'critical', 'kept as the organization spells it')
  const id = declared.json().id as string
  t.equal((await call(ada!, 'PATCH', `${base}/incidents/${id}`, { severity: 'SEV4' })).statusCode, 400)
  t.equal((await call(ada!, 'PATCH', `${base}/incidents/${id}`, { severity: 'minor' })).json().severity, 'minor')
  t.same(
    (await call(viewer!, 'GET', `${base}/incidents?severity=minor`)).json().data.map((incident: { id: string }) => incident.id),
    [id],
  )

  const unknown = await call(viewer!, 'GET', `${base}/incidents?severity=minor&severity=SEV1`)
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /^querystring\/severity\/1 is not a severity of this organization/)

  // A responder request pages at the severity's priority: minor pages at P3.
  const asked = await call(ada!, 'POST', `${base}/incidents/${id}/responder-requests`, {
    targets: [{ type: 'user', id: manager!.userId }],
  })
  t.equal(asked.statusCode, 201)
  const page = await db
    .selectFrom('divinux.alerts')
    .select('priority')
    .where('organizationId', '=', orgId)
    .where('title', 'like', 'Responder request for %: Outage')
    .executeTakeFirstOrThrow()
  t.equal(page.priority, 'P3')
})

t.test('an alert opens its incident at the most severe severity not paging more urgently than itself', async (t) => {
  const config = (await call(person('owner'), 'POST', `${base}/webhooks`, { name: 'severities' })).json() as { ingestPath: string }
  const fire = async (priority: string) => {
    const response = await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: { title: `Broken at ${priority}`, priority, service: `svc-${priority}` },
    })
    const alertId = response.json().alertId as string
    return until(`the ${priority} alert's incident`, async () => (await call(viewer!, 'GET', `${base}/alerts/${alertId}`)).json().incident)
  }
  const [p1, p2] = [await fire('P1'), await fire('P2')]
  const severityOf = async (incident: { id: string }) => (await call(viewer!, 'GET', `${base}/incidents/${incident.id}`)).json().severity
  t.equal(await severityOf(p1), 'critical')
  t.equal(await severityOf(p2), 'SEV2', 'no severity pages at P2: the next, paging at P3')
})

t.test('workflows name only the organization’s severities, and say when one was dropped', async (t) => {
  const refused = await call(manager!, 'POST', `${base}/workflows`, {
    name: 'Critical',
    trigger: 'incident.declared',
    conditions: [{ type: 'severity', in: ['SEV1'] }],
    actions: [{ type: 'create_rca' }],
  })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /conditions\/0\/in names SEV1: not a severity of this organization/)
  const flow = await call(manager!, 'POST', `${base}/workflows`, {
    name: 'Cosmetic',
    trigger: 'incident.declared',
    conditions: [{ type: 'severity', in: ['cosmetic', 'critical'] }],
    actions: [{ type: 'create_rca' }],
  })
  t.equal(flow.statusCode, 201)
  t.same(flow.json().problems, [])
  const kept = custom.filter((severity) => severity.key !== 'cosmetic')
  t.equal((await call(manager!, 'PUT', `${base}/incident-severities`, { severities: kept })).statusCode, 200)
  t.same((await call(viewer!, 'GET', `${base}/workflows/${flow.json().id}`)).json().problems, [
    'conditions/0/in names cosmetic, no longer a severity: it never holds for them',
  ])
})
