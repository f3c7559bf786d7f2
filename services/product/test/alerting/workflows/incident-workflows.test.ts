import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Workflows on incident changes (decision 0031): a Security incident declared through the API
// pages the security policy and calls the tracker's webhook, once; changes of fields, severity,
// roles and status trigger their own workflows, with conditions on type, severity and fields.

const receiver = await startWebhookReceiver(t, () => ({ status: 200, body: 'ok' }))
const service = await startTestService(t, buildApp, { config: { outbound: { allowPrivateTargets: true } } })
const { app } = service
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'incidentflows', {
  manager: 'manager',
  ada: 'responder',
  sam: 'responder',
  viewer: 'viewer',
})
const [manager, ada, sam, viewer, stranger] = ['manager', 'ada', 'sam', 'viewer', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const created = async (url: string, payload: object, who: Who = manager!) => {
  const response = await call(who, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json() as { id: string; secret?: string }
}

await created(`${base}/incident-fields`, { key: 'impact', name: 'Customer impact', kind: 'select', options: ['none', 'some', 'all'] })
await created(`${base}/incident-fields`, { key: 'root_cause', name: 'Root cause', kind: 'text' })
await created(`${base}/incident-fields`, { key: 'postmortem', name: 'Postmortem', kind: 'select', options: ['needed', 'not_needed'] })
await created(`${base}/incident-types`, {
  key: 'security',
  name: 'Security',
  fields: [
    { field: 'impact', required: 'declare' },
    { field: 'root_cause', required: 'resolve' },
  ],
})
const securityPolicy = await created(`${base}/escalation-policies`, {
  name: 'Security on call',
  steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: sam!.userId }] }],
})
const tracker = await created(`${base}/outbound-webhooks`, { name: 'Tracker', url: `${receiver.url}/tracker`, events: ['alert.created'] })

type Run = {
  status: string
  incidentId: string | null
  trigger: string
  conditions: Array<{ type: string; matched: boolean; detail: string }>
  actions: Array<{ type: string; status: string; detail: string }>
}
const runsOf = async (workflowId: string) => (await call(viewer!, 'GET', `${base}/workflows/${workflowId}/runs`)).json().data as Run[]
const finishedRuns = (workflowId: string, incidentId: string, count: number) =>
  until(`${count} finished run(s) of ${workflowId}`, async () => {
    const runs = (await runsOf(workflowId)).filter((run) => run.incidentId === incidentId && !['queued', 'running'].includes(run.status))
    return runs.length >= count ? runs : undefined
  })
const trackerCalls = () =>
  receiver.received
    .filter((entry) => entry.path === '/tracker')
    .map(
      (request) =>
        new Webhook(tracker.secret!).verify(request.raw, {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }) as {
          type: string
          data: { incident: { reference: string; type: string; fields: Record<string, unknown> }; workflow: { name: string } }
        },
    )

t.test('incident workflows are checked against their trigger and the organization', async (t) => {
  const refusals: Array<[object, RegExp]> = [
    [
      {
        trigger: 'incident.declared',
        conditions: [{ type: 'priority', in: ['P1'] }],
        actions: [{ type: 'set_field', field: 'impact', value: 'all' }],
      },
      /conditions\/0\/type priority applies to alert triggers, not incident.declared/,
    ],
    [
      { trigger: 'alert.created', actions: [{ type: 'set_field', field: 'impact', value: 'all' }] },
      /actions\/0\/type set_field acts on incident triggers/,
    ],
    [
      { trigger: 'incident.declared', actions: [{ type: 'set_field', field: 'colour', value: 'red' }] },
      /actions\/0\/field is not a custom incident field/,
    ],
    [
      { trigger: 'incident.declared', actions: [{ type: 'request_responders', targets: [{ type: 'user', id: stranger!.userId }] }] },
      /actions\/0\/targets\/0\/id is not an active member of this organization/,
    ],
    [
      {
        trigger: 'incident.resolved',
        conditions: [{ type: 'environment', in: ['production'] }],
        actions: [{ type: 'call_webhook', outboundWebhookId: tracker.id }],
      },
      /environment applies to deploy.recorded, not incident.resolved/,
    ],
  ]
  for (const [payload, message] of refusals) {
    const refused = await call(manager!, 'POST', `${base}/workflows`, { name: 'Refused', ...payload })
    t.equal(refused.statusCode, 400, JSON.stringify(payload))
    t.match(refused.json().message, message)
  }
})

t.test('declaring a Security incident pages the security policy and calls the tracker, once per incident', async (t) => {
  const onDeclare = await created(`${base}/workflows`, {
    name: 'Security response',
    trigger: 'incident.declared',
    conditions: [{ type: 'incident_type', in: ['security'] }],
    actions: [
      {
        type: 'request_responders',
        targets: [{ type: 'escalation_policy', id: securityPolicy.id }],
        message: 'Security incident declared',
      },
      { type: 'call_webhook', outboundWebhookId: tracker.id },
      { type: 'set_field', field: 'postmortem', value: 'needed' },
    ],
    oncePerIncident: true,
  })
  const plain = (await created(`${base}/incidents`, { title: 'Slow search', severity: 'SEV3' }, ada!)).id
  const declared = await created(
    `${base}/incidents`,
    { title: 'Token leaked', severity: 'SEV2', type: 'security', fields: { impact: 'some' } },
    ada!,
  )
  const [run] = await finishedRuns(onDeclare.id, declared.id, 1)
  t.match(run, {
    status: 'succeeded',
    trigger: 'incident.declared',
    conditions: [
      { type: 'incident_type', matched: true },
      { type: 'once_per_incident', matched: true },
    ],
    actions: [
      { type: 'request_responders', status: 'succeeded', detail: /1 responder request/ },
      { type: 'call_webhook', status: 'succeeded' },
      { type: 'set_field', status: 'succeeded', detail: 'postmortem set to "needed"' },
    ],
  })
  const [plainRun] = await finishedRuns(onDeclare.id, plain, 1)
  t.match(plainRun, {
    status: 'not_matched',
    conditions: [{ type: 'incident_type', matched: false, detail: 'type "none" is not one of "security"' }],
  })

  const requests = (await call(viewer!, 'GET', `${base}/incidents/${declared.id}/responder-requests`)).json().data as Array<{
    target: { type: string; id: string }
    paged: Array<{ email: string }>
  }>
  t.match(requests, [{ target: { type: 'escalation_policy', id: securityPolicy.id } }], 'the security policy was asked')
  const paged = await until('the policy’s first step paged', async () => {
    const [request] = (await call(viewer!, 'GET', `${base}/incidents/${declared.id}/responder-requests`)).json().data
    return request?.paged.length > 0 ? request.paged : undefined
  })
  t.equal(paged[0].email, sam!.email)
  await until('the tracker called', () => trackerCalls()[0])
  t.match(trackerCalls()[0], {
    type: 'incident.declared',
    data: { incident: { type: 'security', fields: { impact: 'some' } }, workflow: { name: 'Security response' } },
  })
  t.match((await call(viewer!, 'GET', `${base}/incidents/${declared.id}`)).json().fields, { impact: 'some', postmortem: 'needed' })
  const timeline = (await call(viewer!, 'GET', `${base}/incidents/${declared.id}/timeline?limit=100`)).json().data as Array<{
    kind: string
    authorId: string | null
  }>
  t.match(
    timeline.filter((entry) => entry.kind === 'responders_requested' || entry.kind === 'field_changed'),
    [
      { kind: 'field_changed', authorId: null },
      { kind: 'responders_requested', authorId: null },
    ],
    'what the workflow did is on the timeline, by the system',
  )

  // The workflow changes to run on every change of a field: only once for this incident.
  t.equal((await call(manager!, 'PATCH', `${base}/workflows/${onDeclare.id}`, { trigger: 'incident.field_changed' })).statusCode, 200)
  await call(ada!, 'PATCH', `${base}/incidents/${declared.id}`, { fields: { impact: 'all' } })
  const runs = await until('the field change’s run', async () => {
    const all = await finishedRuns(onDeclare.id, declared.id, 2)
    return all.find((candidate) => candidate.trigger === 'incident.field_changed')
  })
  t.match(runs, {
    status: 'not_matched',
    conditions: [
      { type: 'incident_type', matched: true },
      { type: 'once_per_incident', matched: false, detail: /acted on INC-\d+ already/ },
    ],
  })
  t.equal(trackerCalls().length, 1, 'the tracker was called once')
  t.equal((await call(manager!, 'DELETE', `${base}/workflows/${onDeclare.id}`)).statusCode, 204)
})

t.test('severity, role, status and resolution changes trigger their workflows, with conditions on severity and fields', async (t) => {
  const flow = async (name: string, trigger: string, conditions: object[] = []) =>
    (await created(`${base}/workflows`, { name, trigger, conditions, actions: [{ type: 'call_webhook', outboundWebhookId: tracker.id }] }))
      .id
  const severe = await flow('Severe', 'incident.severity_changed', [{ type: 'severity', in: ['SEV1'] }])
  const roles = await flow('Roles', 'incident.role_assigned')
  const statuses = await flow('Statuses', 'incident.status_changed')
  const resolved = await flow('Resolved with impact', 'incident.resolved', [{ type: 'field', field: 'impact', in: ['all'] }])

  const incident = (await created(`${base}/incidents`, { title: 'Checkout down', severity: 'SEV3', fields: { impact: 'all' } }, ada!)).id
  await call(ada!, 'PATCH', `${base}/incidents/${incident}`, { severity: 'SEV2' })
  await call(ada!, 'PATCH', `${base}/incidents/${incident}`, { severity: 'SEV1' })
  await call(ada!, 'PUT', `${base}/incidents/${incident}/roles/scribe`, { userId: sam!.userId })
  await call(ada!, 'PATCH', `${base}/incidents/${incident}`, { status: 'investigating' })
  t.equal((await call(ada!, 'PATCH', `${base}/incidents/${incident}`, { status: 'resolved' })).statusCode, 200)

  const severeRuns = await finishedRuns(severe, incident, 2)
  t.same(severeRuns.map((run) => run.status).sort(), ['not_matched', 'succeeded'], 'SEV2 did not match, SEV1 did')
  // The commander given at declaration, then the scribe; two status changes: triage → investigating → resolved.
  t.same(
    (await finishedRuns(roles, incident, 2)).map((run) => run.status),
    ['succeeded', 'succeeded'],
  )
  t.equal((await finishedRuns(statuses, incident, 2)).length, 2)
  t.match(await finishedRuns(resolved, incident, 1), [
    { status: 'succeeded', conditions: [{ type: 'field', matched: true, detail: 'field impact holds "all"' }] },
  ])
  const types = await until('every call', () => {
    const calls = trackerCalls().filter((call) => call.data.incident.reference !== undefined && call.type !== 'incident.declared')
    return calls.length >= 6 ? calls.map((call) => call.type) : undefined
  })
  t.same([...types].sort(), [
    'incident.resolved',
    'incident.role_assigned',
    'incident.role_assigned',
    'incident.severity_changed',
    'incident.status_changed',
    'incident.status_changed',
  ])
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/workflows/${severe}/runs`)).statusCode, 404)
})

t.test('a dry run says what a workflow would do for an incident as it is, and does none of it', async (t) => {
  const flow = await created(`${base}/workflows`, {
    name: 'Dry',
    trigger: 'incident.declared',
    conditions: [
      { type: 'incident_type', in: ['security'] },
      { type: 'severity', in: ['SEV1', 'SEV2'] },
    ],
    actions: [
      {
        type: 'request_responders',
        targets: [
          { type: 'escalation_policy', id: securityPolicy.id },
          { type: 'user', id: sam!.userId },
        ],
      },
      { type: 'call_webhook', outboundWebhookId: tracker.id },
      { type: 'set_field', field: 'postmortem', value: 'needed' },
    ],
    enabled: false,
  })
  const incident = await created(
    `${base}/incidents`,
    { title: 'Dry', severity: 'SEV2', type: 'security', fields: { impact: 'none' } },
    ada!,
  )
  const dry = await call(viewer!, 'POST', `${base}/workflows/${flow.id}/dry-run`, { incidentId: incident.id })
  t.equal(dry.statusCode, 200, dry.body)
  t.same(dry.json(), {
    wouldAct: true,
    conditions: [
      { type: 'incident_type', matched: true, detail: 'type "security" is one of "security"' },
      { type: 'severity', matched: true, detail: 'severity "SEV2" is one of "SEV1", "SEV2"' },
    ],
    actions: [
      {
        type: 'request_responders',
        wouldFail: false,
        detail: `page the escalation policy "Security on call", ${sam!.email} about the incident, unless asked already`,
      },
      { type: 'call_webhook', wouldFail: false, detail: 'send the event to "Tracker", signed' },
      { type: 'set_field', wouldFail: false, detail: 'set the field postmortem to "needed", checked as the incident API checks it' },
    ],
  })
  t.notOk('postmortem' in (await call(viewer!, 'GET', `${base}/incidents/${incident.id}`)).json().fields, 'nothing was set')
  t.same((await call(viewer!, 'GET', `${base}/incidents/${incident.id}/responder-requests`)).json().data, [], 'nobody was paged')
  t.equal((await call(viewer!, 'GET', `${base}/workflows/${flow.id}/runs`)).json().meta.total, 0, 'no run was recorded')

  const minor = await created(`${base}/incidents`, { title: 'Minor', severity: 'SEV4', type: 'security', fields: { impact: 'none' } }, ada!)
  t.match((await call(viewer!, 'POST', `${base}/workflows/${flow.id}/dry-run`, { incidentId: minor.id })).json(), {
    wouldAct: false,
    conditions: [{ matched: true }, { matched: false }],
  })
  const wrongKind = await call(viewer!, 'POST', `${base}/workflows/${flow.id}/dry-run`, { alertId: incident.id })
  t.equal(wrongKind.statusCode, 400)
  t.match(wrongKind.json().message, 'incidentId is what incident.declared workflows run on')
  const theirs = (
    await call(stranger!, 'POST', `/api/v1/organizations/${otherOrgId}/incidents`, { title: 'Theirs', severity: 'SEV3' })
  ).json().id as string
  const foreign = await call(viewer!, 'POST', `${base}/workflows/${flow.id}/dry-run`, { incidentId: theirs })
  t.equal(foreign.statusCode, 400)
  t.match(foreign.json().message, 'incidentId is not an incident of the organization')
  t.equal(
    (await call(stranger!, 'POST', `/api/v1/organizations/${otherOrgId}/workflows/${flow.id}/dry-run`, { incidentId: theirs })).statusCode,
    404,
  )
  t.equal((await call(viewer!, 'POST', `${base}/workflows/${flow.id}/dry-run`, {})).statusCode, 400)
})
