import { randomUUID } from 'node:crypto'
import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'incidents', {
  ada: 'responder',
  bo: 'responder',
  viewer: 'viewer',
  bystander: null,
})
const [owner, ada, bo, viewer, bystander, stranger] = ['owner', 'ada', 'bo', 'viewer', 'bystander', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const config = (await call(owner!, 'POST', `${base}/webhooks`, { name: 'Incidents' })).json() as { ingestPath: string }
async function ingest(event: object): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: event,
  })
  if (response.statusCode !== 202) throw new Error(`ingest: ${response.statusCode} ${response.body}`)
  return response.json().alertId as string
}
const auditActions = async (incidentId: string) =>
  (
    await db
      .selectFrom('core.auditLogs')
      .select('action')
      .where('entityType', '=', 'incident')
      .where('entityId', '=', incidentId)
      .orderBy('createdAt')
      .orderBy('id')
      .execute()
  ).map((row) => row.action)

t.test('a responder declares an incident: triage, the declarer commands, the alerts are linked with why', async (t) => {
  const alertId = await ingest({ title: 'Checkout errors', priority: 'P3', service: 'checkout' })
  const declared = await call(ada!, 'POST', `${base}/incidents`, {
    title: 'Checkout is failing',
    severity: 'SEV2',
    summary: 'Payments time out',
    alertIds: [alertId],
  })
  t.equal(declared.statusCode, 201, declared.body)
  const incident = declared.json()
  t.match(
    incident,
    {
      number: 1,
      reference: 'INC-1',
      title: 'Checkout is failing',
      summary: 'Payments time out',
      severity: 'SEV2',
      status: 'triage',
      openedBy: 'person',
      declaredBy: ada!.userId,
      alertCount: 1,
      acknowledgedAt: null,
      mttaSeconds: null,
      roles: [{ role: 'commander', userId: ada!.userId, email: 'ada@incidents.example' }],
    },
    'in triage, numbered, commanded by its declarer',
  )
  const alerts = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/alerts`)).json()
  t.match(alerts, {
    meta: { total: 1 },
    data: [{ alertId, title: 'Checkout errors', rule: 'declared', score: 1, matched: {}, linkedBy: ada!.userId }],
  })
  const timeline = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline`)).json()
  t.same(
    timeline.data.map((entry: { kind: string }) => entry.kind).sort(),
    ['alert_linked', 'declared', 'role_assigned'],
    'the declaration, the commander and the alert are on the timeline',
  )
  t.same(await auditActions(incident.id), ['incident.declared'])

  const second = await call(bo!, 'POST', `${base}/incidents`, { title: 'Also checkout', severity: 'SEV3', alertIds: [alertId] })
  t.equal(second.statusCode, 409, 'an alert is in one incident at most')
  t.match(second.json().message, new RegExp(incident.id))
  t.equal((await call(viewer!, 'GET', `${base}/incidents`)).json().meta.total, 1, 'nothing was written')
})

t.test('bad input is refused with the field named and changes nothing; access follows the alerting roles', async (t) => {
  const cases: Array<[string, Who, object, number, RegExp?]> = [
    ['a viewer', viewer!, { title: 'X', severity: 'SEV1' }, 403],
    ['a member without an alerting role', bystander!, { title: 'X', severity: 'SEV1' }, 403],
    ['no title', ada!, { severity: 'SEV1' }, 400, /title/],
    ['a blank title', ada!, { title: '   ', severity: 'SEV1' }, 400, /title/],
    ['an unknown severity', ada!, { title: 'X', severity: 'SEV0' }, 400, /severity/],
    ['an unknown field', ada!, { title: 'X', severity: 'SEV1', priority: 'P1' }, 400],
    ['a commander from elsewhere', ada!, { title: 'X', severity: 'SEV1', commanderId: stranger!.userId }, 400, /commanderId/],
    ['an alert of no one', ada!, { title: 'X', severity: 'SEV1', alertIds: [randomUUID()] }, 400, /alertIds\/0/],
    [
      'a start in the future',
      ada!,
      { title: 'X', severity: 'SEV1', startedAt: new Date(Date.now() + 3_600_000).toISOString() },
      400,
      /startedAt/,
    ],
  ]
  for (const [what, who, payload, status, message] of cases) {
    const response = await call(who, 'POST', `${base}/incidents`, payload)
    t.equal(response.statusCode, status, what)
    if (message) t.match(response.json().message, message, what)
  }
  t.equal((await call(viewer!, 'GET', `${base}/incidents`)).json().meta.total, 1, 'nothing was written')
  const [incident] = (await call(viewer!, 'GET', `${base}/incidents`)).json().data
  t.equal(
    (await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/incidents/${incident.id}`)).statusCode,
    404,
    "another organization's id is 404",
  )
  t.equal((await call(viewer!, 'GET', `${base}/incidents/not-a-uuid`)).statusCode, 404)
  t.equal((await call(viewer!, 'GET', `${base}/incidents/${randomUUID()}/timeline`)).statusCode, 404)
  t.equal((await call(viewer!, 'PATCH', `${base}/incidents/${incident.id}`, { status: 'investigating' })).statusCode, 403)
})

t.test('the state machine: moves, the milestones they set, MTTA and MTTR; a resolved incident only reopens', async (t) => {
  const created = (await call(bo!, 'POST', `${base}/incidents`, { title: 'Search is slow', severity: 'SEV3' })).json()
  t.equal(created.number, 2, 'numbers follow each other in the organization')
  const move = (status: string) => call(bo!, 'PATCH', `${base}/incidents/${created.id}`, { status })

  const investigating = (await move('investigating')).json()
  t.match(investigating, { status: 'investigating', acknowledgedAt: String, mitigatedAt: null, resolvedAt: null })
  t.type(investigating.mttaSeconds, 'number', 'MTTA once acknowledged')
  const monitoring = (await move('monitoring')).json()
  t.match(monitoring, { status: 'monitoring', mitigatedAt: String, acknowledgedAt: investigating.acknowledgedAt }, 'acknowledgement kept')
  const back = (await move('investigating')).json()
  t.equal(back.mitigatedAt, monitoring.mitigatedAt, 'a fix that did not hold keeps when it was first mitigated')
  const resolved = (await move('resolved')).json()
  t.match(resolved, { status: 'resolved', resolvedAt: String })
  t.type(resolved.mttrSeconds, 'number')

  const refused = await move('monitoring')
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { code: 'CONFLICT', message: /only be reopened, to investigating/ })
  const same = await call(bo!, 'PATCH', `${base}/incidents/${created.id}`, { status: 'resolved' })
  t.equal(same.statusCode, 200, 'the same status is no change')
  const reopened = (await move('investigating')).json()
  t.match(reopened, { status: 'investigating', resolvedAt: null, mttrSeconds: null })

  const renamed = (await call(bo!, 'PATCH', `${base}/incidents/${created.id}`, { title: 'Search is down', severity: 'SEV1' })).json()
  t.match(renamed, { title: 'Search is down', severity: 'SEV1' })
  t.equal((await call(bo!, 'PATCH', `${base}/incidents/${created.id}`, {})).statusCode, 400, 'an empty change is refused')
  t.equal((await call(bo!, 'PATCH', `${base}/incidents/${created.id}`, { status: 'closed' })).statusCode, 400)

  const kinds = (await call(viewer!, 'GET', `${base}/incidents/${created.id}/timeline?limit=100`))
    .json()
    .data.map((entry: { kind: string; data: object }) => [entry.kind, entry.data])
  t.match(
    kinds.slice(0, 3),
    [
      ['updated', { title: 'Search is down' }],
      ['severity_changed', { from: 'SEV3', to: 'SEV1' }],
      ['status_changed', { from: 'resolved', to: 'investigating' }],
    ],
    'newest first, each change with its values',
  )
  t.same(
    await auditActions(created.id),
    ['incident.declared', ...Array(6).fill('incident.updated')],
    'every change is audited (the unchanged status was not a change)',
  )
  const openOnes = (await call(viewer!, 'GET', `${base}/incidents?status=open`)).json()
  t.equal(openOnes.meta.total, 2)
  t.equal((await call(viewer!, 'GET', `${base}/incidents?status=resolved`)).json().meta.total, 0)
})

t.test('roles: given to members, replaced, left unheld; notes and status updates on the timeline, paged', async (t) => {
  const incident = (
    await call(ada!, 'POST', `${base}/incidents`, { title: 'Login fails', severity: 'SEV2', commanderId: bo!.userId })
  ).json()
  t.match(incident.roles, [{ role: 'commander', userId: bo!.userId }], 'the commander named at declaration')
  const scribe = await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/scribe`, { userId: ada!.userId })
  t.equal(scribe.statusCode, 200)
  const own = await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/customer-liaison`, { userId: viewer!.userId })
  t.match(
    own.json().roles,
    [
      { role: 'commander', userId: bo!.userId },
      { role: 'customer-liaison', userId: viewer!.userId },
      { role: 'scribe', userId: ada!.userId },
    ],
    'a role name of the organization’s own',
  )
  const handedOver = (await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/commander`, { userId: ada!.userId })).json()
  t.match(handedOver.roles[0], { role: 'commander', userId: ada!.userId, assignedBy: ada!.userId })
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/Bad Role`, { userId: ada!.userId })).statusCode, 400)
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/scribe`, { userId: stranger!.userId })).statusCode, 400)
  t.equal((await call(ada!, 'DELETE', `${base}/incidents/${incident.id}/roles/scribe`)).statusCode, 204)
  t.equal((await call(ada!, 'DELETE', `${base}/incidents/${incident.id}/roles/scribe`)).statusCode, 404, 'a role nobody holds')

  const note = await call(bo!, 'POST', `${base}/incidents/${incident.id}/timeline`, { body: 'Rolled back the auth service' })
  t.equal(note.statusCode, 201)
  t.match(note.json(), { kind: 'note', body: 'Rolled back the auth service', authorId: bo!.userId })
  const update = await call(bo!, 'POST', `${base}/incidents/${incident.id}/timeline`, { kind: 'status_update', body: 'Logins recovering' })
  t.match(update.json(), { kind: 'status_update' })
  t.equal((await call(bo!, 'POST', `${base}/incidents/${incident.id}/timeline`, { body: ' ' })).statusCode, 400)
  t.equal((await call(viewer!, 'POST', `${base}/incidents/${incident.id}/timeline`, { body: 'hi' })).statusCode, 403)
  const firstPage = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline?limit=2`)).json()
  t.match(firstPage, { meta: { total: 8, limit: 2 }, data: [{ kind: 'status_update' }, { kind: 'note' }] })
  t.equal((await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline?limit=101`)).statusCode, 400, 'never unbounded')
  t.same(await auditActions(incident.id), [
    'incident.declared',
    'incident.role_assigned',
    'incident.role_assigned',
    'incident.role_assigned',
    'incident.role_removed',
    'incident.note_added',
    'incident.status_update_added',
  ])
})

t.test('an alert is put in an incident by hand, once', async (t) => {
  const incident = (await call(ada!, 'POST', `${base}/incidents`, { title: 'Disk pressure', severity: 'SEV4' })).json()
  const alertId = await ingest({ title: 'Disk 91%', priority: 'P4', service: 'db' })
  const linked = await call(ada!, 'POST', `${base}/incidents/${incident.id}/alerts`, { alertId })
  t.equal(linked.statusCode, 201)
  t.match(linked.json(), { alertId, rule: 'manual', score: 1, linkedBy: ada!.userId, service: 'db' })
  t.equal((await call(ada!, 'POST', `${base}/incidents/${incident.id}/alerts`, { alertId })).statusCode, 409)
  const elsewhere = await call(stranger!, 'POST', `/api/v1/organizations/${otherOrgId}/webhooks`, { name: 'Other' })
  const otherAlert = (
    await app.inject({
      method: 'POST',
      url: elsewhere.json().ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: { title: 'Theirs' },
    })
  ).json().alertId
  const foreign = await call(ada!, 'POST', `${base}/incidents/${incident.id}/alerts`, { alertId: otherAlert })
  t.equal(foreign.statusCode, 400, "another organization's alert is no alert of ours")
  t.match(foreign.json().message, /alertId/)
  t.equal((await call(viewer!, 'GET', `${base}/incidents/${incident.id}`)).json().alertCount, 1)
})

t.test('a P1 or P2 alert in no incident opens one, once, with the rule on the link; lower priorities do not', async (t) => {
  const p1 = await ingest({ title: 'API down', priority: 'P1', service: 'api', fingerprint: 'api-down' })
  const low = await ingest({ title: 'Slow page', priority: 'P4' })
  const link = await until('the P1 alert to open an incident', () =>
    db.selectFrom('divinux.incidentAlerts').selectAll().where('alertId', '=', p1).executeTakeFirst(),
  )
  t.match(link, { rule: 'priority', score: 1, matched: { priority: 'P1' }, linkedBy: null })
  const incident = (await call(viewer!, 'GET', `${base}/incidents/${link.incidentId}`)).json()
  t.match(incident, {
    title: 'API down',
    severity: 'SEV1',
    status: 'triage',
    openedBy: 'alert',
    declaredBy: null,
    alertCount: 1,
    roles: [],
  })
  t.same(await auditActions(incident.id), ['incident.opened'], 'audited as the system')
  // The same alert firing again is the same alert: no second incident.
  await ingest({ title: 'API down', priority: 'P1', service: 'api', fingerprint: 'api-down' })
  await until(
    'the low alert to be dispatched',
    async () =>
      (
        await db
          .selectFrom('divinux.alertEvents')
          .select('dispatchedAt')
          .where('alertId', '=', low)
          .where('type', '=', 'created')
          .executeTakeFirst()
      )?.dispatchedAt,
  )
  const opened = await db
    .selectFrom('divinux.incidents')
    .select('id')
    .where('organizationId', '=', orgId)
    .where('openedBy', '=', 'alert')
    .execute()
  t.equal(opened.length, 1, 'one incident for the P1 alert, none for the P4 one')
  t.notOk(await db.selectFrom('divinux.incidentAlerts').select('alertId').where('alertId', '=', low).executeTakeFirst())
})
