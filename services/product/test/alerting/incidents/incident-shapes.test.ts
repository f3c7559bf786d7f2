import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Incidents an organization shapes (decision 0031): custom fields of seven kinds, and types that
// say which fields their incidents need at declaration and at resolution.

const service = await startTestService(t, buildApp)
const { app } = service
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'shapes', {
  manager: 'manager',
  ada: 'responder',
  viewer: 'viewer',
})
const [owner, manager, ada, viewer, stranger] = ['owner', 'manager', 'ada', 'viewer', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const created = async (who: Who, url: string, payload: object) => {
  const response = await call(who, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}

await created(owner!, `${base}/services`, { key: 'payments', name: 'Payments' })
const fields = {
  impact: await created(manager!, `${base}/incident-fields`, {
    key: 'impact',
    name: 'Customer impact',
    kind: 'select',
    options: ['none', 'some', 'all'],
  }),
  rootCause: await created(manager!, `${base}/incident-fields`, { key: 'root_cause', name: 'Root cause', kind: 'text' }),
  regions: await created(manager!, `${base}/incident-fields`, {
    key: 'regions',
    name: 'Regions',
    kind: 'multi_select',
    options: ['eu', 'us', 'apac'],
  }),
  customers: await created(manager!, `${base}/incident-fields`, { key: 'customers', name: 'Customers hit', kind: 'number' }),
  lead: await created(manager!, `${base}/incident-fields`, { key: 'security_lead', name: 'Security lead', kind: 'user' }),
  service: await created(manager!, `${base}/incident-fields`, { key: 'service', name: 'Service', kind: 'service' }),
  ticket: await created(manager!, `${base}/incident-fields`, { key: 'ticket', name: 'Ticket', kind: 'link' }),
}
const security = await created(manager!, `${base}/incident-types`, {
  key: 'security',
  name: 'Security',
  fields: [
    { field: 'impact', required: 'declare' },
    { field: 'root_cause', required: 'resolve' },
  ],
})

t.test('fields and types: managers shape them, viewers read them, input is checked', async (t) => {
  t.match(fields.impact, { key: 'impact', kind: 'select', options: ['none', 'some', 'all'], required: 'never' })
  t.equal((await call(viewer!, 'GET', `${base}/incident-fields?limit=100`)).json().meta.total, 7)
  t.same((await call(viewer!, 'GET', `${base}/incident-types/${security.id}`)).json().fields, [
    { field: 'impact', required: 'declare' },
    { field: 'root_cause', required: 'resolve' },
  ])
  t.equal((await call(ada!, 'POST', `${base}/incident-fields`, { key: 'x', name: 'X', kind: 'text' })).statusCode, 403, 'responders do not')
  const refusals: Array<[object, RegExp]> = [
    [{ key: 'severity_note', name: 'S', kind: 'select' }, /options is required for a select field/],
    [{ key: 'notes', name: 'N', kind: 'text', options: ['a'] }, /options is for select and multi_select fields, not text/],
    [{ key: 'type', name: 'T', kind: 'text' }, /type is how chat commands name the incident type/],
    [{ key: 'Impact', name: 'I', kind: 'text' }, /key/],
  ]
  for (const [payload, message] of refusals) {
    const refused = await call(manager!, 'POST', `${base}/incident-fields`, payload)
    t.equal(refused.statusCode, 400, JSON.stringify(payload))
    t.match(refused.json().message, message)
  }
  t.equal((await call(manager!, 'POST', `${base}/incident-fields`, { key: 'impact', name: 'Again', kind: 'text' })).statusCode, 409)
  const unknownField = await call(manager!, 'POST', `${base}/incident-types`, {
    key: 'privacy',
    name: 'Privacy',
    fields: [{ field: 'nope', required: 'declare' }],
  })
  t.equal(unknownField.statusCode, 400)
  t.match(unknownField.json().message, 'fields/0/field is not a custom field of the organization (nope)')
  t.equal((await call(manager!, 'POST', `${base}/incident-types`, { key: 'none', name: 'None' })).statusCode, 400)
  t.equal((await call(manager!, 'POST', `${base}/incident-types`, { key: 'security', name: 'Again' })).statusCode, 409)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/incident-types/${security.id}`)).statusCode, 404)

  const renamed = await call(manager!, 'PATCH', `${base}/incident-fields/${fields.ticket.id}`, { name: 'Ticket link', required: 'resolve' })
  t.match(renamed.json(), { key: 'ticket', kind: 'link', name: 'Ticket link', required: 'resolve' })
  t.equal(
    (await call(manager!, 'PATCH', `${base}/incident-fields/${fields.ticket.id}`, { options: ['a'] })).statusCode,
    400,
    'a link takes no options',
  )
  t.equal((await call(manager!, 'PATCH', `${base}/incident-fields/${fields.ticket.id}`, { required: 'never' })).statusCode, 200)
  t.match((await call(viewer!, 'GET', `${base}/incident-fields/${fields.ticket.id}`)).json(), { required: 'never' })
  const retyped = await call(manager!, 'PATCH', `${base}/incident-types/${security.id}`, { description: 'Anything touching secrets' })
  t.match(retyped.json(), { description: 'Anything touching secrets', fields: { length: 2 } })
  t.equal(
    (
      await call(manager!, 'PATCH', `${base}/incident-types/${security.id}`, {
        fields: [
          { field: 'impact', required: 'declare' },
          { field: 'impact', required: 'resolve' },
        ],
      })
    ).statusCode,
    400,
    'a field named twice',
  )
  t.match((await call(viewer!, 'GET', `${base}/incident-types?limit=10`)).json(), { meta: { total: 1 }, data: [{ key: 'security' }] })
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/incident-fields/${fields.impact.id}`)).statusCode, 404)
})

t.test('a Security incident needs its impact to be declared, and its root cause to be resolved', async (t) => {
  const declare = (payload: object) =>
    call(ada!, 'POST', `${base}/incidents`, { title: 'Leaked token', severity: 'SEV2', type: 'security', ...payload })
  const missing = await declare({})
  t.equal(missing.statusCode, 400)
  t.match(missing.json().message, 'body/fields/impact is required to declare a Security incident: set "Customer impact" (impact)')
  const wrong: Array<[object, string]> = [
    [{ fields: { impact: 'most' } }, 'fields/impact (select) must be one of "none", "some", "all"'],
    [{ fields: { impact: 'some', regions: ['eu', 'mars'] } }, 'fields/regions (multi_select) must be a list of'],
    [{ fields: { impact: 'some', customers: 'many' } }, 'fields/customers (number) must be a number'],
    [{ fields: { impact: 'some', security_lead: stranger!.userId } }, 'fields/security_lead is not an active member'],
    [{ fields: { impact: 'some', service: 'billing' } }, 'fields/service is not the key of a service of the catalog (billing)'],
    [{ fields: { impact: 'some', ticket: 'javascript:alert(1)' } }, 'fields/ticket (link) must be an http or https URL'],
    [{ fields: { impact: 'some', color: 'red' } }, 'fields/color'],
    [{ type: 'privacy', fields: { impact: 'some' } }, 'body/type is not an incident type of the organization (privacy)'],
  ]
  for (const [payload, message] of wrong) {
    const refused = await declare(payload)
    t.equal(refused.statusCode, 400, JSON.stringify(payload))
    t.match(refused.json().message, message)
  }
  t.equal((await call(owner!, 'GET', `${base}/incidents`)).json().meta.total, 0, 'a refused declaration declares nothing')

  const declared = await declare({
    fields: { impact: 'some', regions: ['eu', 'us'], customers: 12, security_lead: manager!.userId, service: 'Payments' },
  })
  t.equal(declared.statusCode, 201, declared.body)
  const incident = declared.json()
  t.match(incident, {
    type: 'security',
    fields: { impact: 'some', regions: ['eu', 'us'], customers: 12, security_lead: manager!.userId, service: 'payments' },
  })

  const refused = await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, { status: 'resolved' })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, 'body/fields/root_cause is required to resolve a Security incident: set "Root cause" (root_cause)')
  t.equal((await call(ada!, 'GET', `${base}/incidents/${incident.id}`)).json().status, 'triage', 'and it stays open')
  const clearing = await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, {
    fields: { impact: null, root_cause: 'A token in a log' },
  })
  t.equal(clearing.statusCode, 200)
  t.notOk('impact' in clearing.json().fields, 'null clears a value')
  const stillMissing = await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, { status: 'resolved' })
  t.match(
    stillMissing.json().message,
    'fields/impact is required to resolve a Security incident',
    'what declaration needed, resolution needs too',
  )
  const resolved = await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, { status: 'resolved', fields: { impact: 'all' } })
  t.equal(resolved.statusCode, 200, resolved.body)
  t.match(resolved.json(), { status: 'resolved', fields: { impact: 'all', root_cause: 'A token in a log' } })
  const timeline = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline?limit=100`)).json().data as Array<{
    kind: string
    data: Record<string, unknown>
  }>
  t.same(
    timeline.filter((entry) => entry.kind === 'field_changed').map((entry) => entry.data),
    [
      { field: 'impact', from: null, to: 'all' },
      { field: 'root_cause', from: null, to: 'A token in a log' },
      { field: 'impact', from: 'some', to: null },
    ],
    'each change of a field is on the timeline, newest first',
  )
})

t.test('the incident list filters by type and by field values', async (t) => {
  const declare = async (title: string, payload: object) =>
    (await created(ada!, `${base}/incidents`, { title, severity: 'SEV3', ...payload })).id as string
  const plain = await declare('Slow search', { fields: { regions: ['apac'], customers: 3 } })
  const euSecurity = await declare('Phishing wave', { type: 'security', fields: { impact: 'none', regions: ['eu'] } })
  const titles = async (query: string) =>
    ((await call(viewer!, 'GET', `${base}/incidents?${query}`)).json().data as Array<{ title: string }>).map((row) => row.title).sort()
  t.same(await titles('type=security&status=open'), ['Phishing wave'])
  t.same(await titles('type=none'), ['Slow search'])
  t.same(await titles('field=regions:eu'), ['Leaked token', 'Phishing wave'], 'a multi_select holds the value among others')
  t.same(await titles('field=regions:eu&field=impact:none'), ['Phishing wave'], 'every filter holds')
  t.same(await titles('field=customers:3'), ['Slow search'], 'a number is compared as a number')
  t.same(await titles('field=service:PAYMENTS'), ['Leaked token'], 'a service by its key, in any letter case')
  const unknown = await call(viewer!, 'GET', `${base}/incidents?field=color:red`)
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, 'querystring/field/0 names no custom field of the organization (color)')
  t.equal((await call(viewer!, 'GET', `${base}/incidents?field=customers:many`)).statusCode, 400)
  t.equal((await call(viewer!, 'GET', `${base}/incidents?type=privacy`)).statusCode, 400)
  t.ok(plain && euSecurity)
})

t.test(
  'removing a field takes its values from incidents and its place from types; removing a type leaves its incidents typeless',
  async (t) => {
    t.equal((await call(manager!, 'DELETE', `${base}/incident-fields/${fields.impact.id}`)).statusCode, 204)
    const rows = (await call(viewer!, 'GET', `${base}/incidents?limit=100`)).json().data as Array<{ fields: Record<string, unknown> }>
    t.notOk(
      rows.some((row) => 'impact' in row.fields),
      'no incident keeps its value',
    )
    t.same((await call(viewer!, 'GET', `${base}/incident-types/${security.id}`)).json().fields, [
      { field: 'root_cause', required: 'resolve' },
    ])
    t.equal((await call(manager!, 'DELETE', `${base}/incident-types/${security.id}`)).statusCode, 204)
    const after = (await call(viewer!, 'GET', `${base}/incidents?limit=100`)).json().data as Array<{ type: string | null }>
    t.ok(
      after.every((row) => row.type === null),
      'its incidents have no type',
    )
    const audit = await app.database.db
      .selectFrom('core.auditLogs')
      .select('action')
      .where('organizationId', '=', orgId)
      .where('entityType', 'in', ['incident_field', 'incident_type'])
      .execute()
    t.same(
      new Set(audit.map((row) => row.action)),
      new Set([
        'incident_field.created',
        'incident_field.updated',
        'incident_type.created',
        'incident_type.updated',
        'incident_field.deleted',
        'incident_type.deleted',
      ]),
    )
  },
)

t.test('roles carry checklists: managers set the tasks, responders tick them, the timeline says who', async (t) => {
  t.equal((await call(ada!, 'PUT', `${base}/incident-checklists/commander`, { tasks: ['Open a bridge'] })).statusCode, 403)
  const set = await call(manager!, 'PUT', `${base}/incident-checklists/commander`, {
    tasks: ['Open a bridge', 'Name a comms lead', 'Post the first update'],
  })
  t.equal(set.statusCode, 200, set.body)
  t.match(set.json(), { role: 'commander', tasks: { length: 3 } })
  t.equal((await call(manager!, 'PUT', `${base}/incident-checklists/scribe`, { tasks: ['Keep the timeline'] })).statusCode, 200)
  t.equal((await call(manager!, 'PUT', `${base}/incident-checklists/scribe`, { tasks: ['A', 'A'] })).statusCode, 400, 'a task once')
  t.same(
    ((await call(viewer!, 'GET', `${base}/incident-checklists`)).json().data as Array<{ role: string }>).map((row) => row.role),
    ['commander', 'scribe'],
  )

  const incident = await created(ada!, `${base}/incidents`, { title: 'Checklist drill', severity: 'SEV3' })
  const ticked = await call(ada!, 'PUT', `${base}/incidents/${incident.id}/checklist/commander/2`)
  t.equal(ticked.statusCode, 200, ticked.body)
  const [commander, scribe] = ticked.json().data
  t.match(commander, {
    role: 'commander',
    holder: { userId: ada!.userId },
    tasks: [
      { position: 1, task: 'Open a bridge', done: false, doneBy: null },
      { position: 2, task: 'Name a comms lead', done: true, doneBy: { userId: ada!.userId, email: ada!.email } },
      { position: 3, done: false },
    ],
  })
  t.match(scribe, { role: 'scribe', holder: null, tasks: [{ done: false }] })
  t.equal(
    (await call(ada!, 'PUT', `${base}/incidents/${incident.id}/checklist/commander/2`)).statusCode,
    200,
    'ticking twice changes nothing',
  )
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${incident.id}/checklist/commander/4`)).statusCode, 404)
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${incident.id}/checklist/comms/1`)).statusCode, 404)
  t.equal((await call(viewer!, 'PUT', `${base}/incidents/${incident.id}/checklist/commander/1`)).statusCode, 403)
  const unticked = await call(ada!, 'DELETE', `${base}/incidents/${incident.id}/checklist/commander/2`)
  t.equal(unticked.json().data[0].tasks[1].done, false)
  const timeline = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline`)).json().data as Array<{
    kind: string
    authorId: string
    data: Record<string, unknown>
  }>
  t.match(
    timeline.filter((entry) => entry.kind.startsWith('task_')),
    [
      { kind: 'task_undone', authorId: ada!.userId, data: { role: 'commander', task: 'Name a comms lead' } },
      { kind: 'task_done', authorId: ada!.userId, data: { role: 'commander', task: 'Name a comms lead', position: 2 } },
    ],
  )
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/incidents/${incident.id}/checklist`)).statusCode, 404)
  t.equal((await call(manager!, 'DELETE', `${base}/incident-checklists/scribe`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${base}/incident-checklists/scribe`)).statusCode, 404)
})

t.test('a type gives its incidents its roles, each with the type’s checklist or the organization’s', async (t) => {
  const refused = await call(manager!, 'POST', `${base}/incident-types`, {
    key: 'breach',
    name: 'Breach',
    roles: [{ role: 'forensics' }, { role: 'forensics' }],
  })
  t.equal(refused.statusCode, 400)
  t.equal(refused.json().message, 'body/roles/1/role names forensics a second time')
  const breach = await created(manager!, `${base}/incident-types`, {
    key: 'breach',
    name: 'Breach',
    roles: [{ role: 'forensics', tasks: ['Image the host', 'Preserve the logs'] }, { role: 'communications' }],
  })
  t.match(breach.roles, [{ role: 'forensics', tasks: ['Image the host', 'Preserve the logs'] }, { role: 'communications' }])
  await call(manager!, 'PUT', `${base}/incident-checklists/communications`, { tasks: ['Tell legal'] })

  const incident = await created(ada!, `${base}/incidents`, { title: 'Data breach', severity: 'SEV1', type: 'breach' })
  const checklist = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/checklist`)).json().data as Array<{
    role: string
    tasks: Array<{ task: string }>
  }>
  t.same(
    checklist.map(({ role, tasks }) => [role, tasks.map((task) => task.task)]),
    [
      ['commander', ['Open a bridge', 'Name a comms lead', 'Post the first update']],
      ['forensics', ['Image the host', 'Preserve the logs']],
      ['communications', ['Tell legal']],
    ],
    'commander and the type’s roles; the type’s tasks, else the organization’s',
  )
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${incident.id}/checklist/forensics/2`)).statusCode, 200)

  const scribe = await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/scribe`, { userId: viewer!.userId })
  t.equal(scribe.statusCode, 400)
  t.equal(scribe.json().message, 'params/role is not a role of Breach incidents: commander, forensics, communications')
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/forensics`, { userId: ada!.userId })).statusCode, 200)

  // Untyped incidents keep every role and the organization's checklists.
  const plain = await created(ada!, `${base}/incidents`, { title: 'Plain', severity: 'SEV4' })
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${plain.id}/roles/scribe`, { userId: ada!.userId })).statusCode, 200)
  t.same(
    ((await call(viewer!, 'GET', `${base}/incidents/${plain.id}/checklist`)).json().data as Array<{ role: string }>).map((row) => row.role),
    ['commander', 'communications'],
  )
  const patched = await call(manager!, 'PATCH', `${base}/incident-types/${breach.id}`, { roles: [] })
  t.same(patched.json().roles, [])
  t.equal((await call(ada!, 'PUT', `${base}/incidents/${incident.id}/roles/scribe`, { userId: viewer!.userId })).statusCode, 200)
})

t.test('a field keyed like a property every object has is still required', async (t) => {
  await created(manager!, `${base}/incident-fields`, { key: 'constructor', name: 'Builder', kind: 'text' })
  await created(manager!, `${base}/incident-types`, {
    key: 'privacy',
    name: 'Privacy',
    fields: [{ field: 'constructor', required: 'declare' }],
  })
  const refused = await call(ada!, 'POST', `${base}/incidents`, { title: 'Leak', severity: 'SEV3', type: 'privacy' })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, 'fields/constructor is required to declare a Privacy incident')
  const declared = await call(ada!, 'POST', `${base}/incidents`, {
    title: 'Leak',
    severity: 'SEV3',
    type: 'privacy',
    fields: { constructor: '  as typed  ' },
  })
  t.equal(declared.statusCode, 201)
  t.same(declared.json().fields, { constructor: '  as typed  ' }, 'a text comes back as it was sent')
})
