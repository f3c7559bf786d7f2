import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { insightsHelpers } from './insights-setup.js'
import { alertingOrganization } from './organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const { orgId, otherOrgId, person } = await alertingOrganization(service, 'rcas', {
  responder: { insights: 'responder', alerting: 'viewer' },
  viewer: { insights: 'viewer', alerting: 'viewer' },
  bystander: null,
  analyst: { insights: 'responder' },
})
const [owner, responder, viewer, bystander, stranger, analyst] = ['owner', 'responder', 'viewer', 'bystander', 'stranger', 'analyst'].map(
  person,
)
const { createConfig, ingest } = insightsHelpers(service, orgId, owner!)
const rcasUrl = `/api/v1/organizations/${orgId}/rcas`
type Who = { headers: { authorization: string } }
const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, who: Who, payload?: unknown) =>
  app.inject({ method, url, headers: who.headers, ...(payload === undefined ? {} : { payload: payload as object }) })

const config = await createConfig({ name: 'Generic', defaultPriority: 'P3' })
const checkout = await ingest(config, { title: 'Checkout latency above 2s', description: 'p99 of /pay', service: 'checkout' })
const search = await ingest(config, { title: 'Search index stale', service: 'search' })
const theirAlert = await db
  .insertInto('divinux.alerts')
  .values({ organizationId: otherOrgId, source: 'generic', title: 'Checkout latency elsewhere', priority: 'P3', fingerprint: 'theirs' })
  .returning('id')
  .executeTakeFirstOrThrow()

async function createRca(payload: Record<string, unknown> = {}) {
  const response = await call('POST', rcasUrl, responder!, { title: 'Checkout outage', ...payload })
  if (response.statusCode !== 201) throw new Error(`RCA not created: ${response.body}`)
  return response.json() as { id: string; status: string }
}

t.test('a responder creates an RCA as a draft; members read it, others cannot', async (t) => {
  const created = await call('POST', rcasUrl, responder!, {
    title: 'Checkout outage on Monday',
    summary: 'Checkout failed for 20 minutes.',
  })
  t.equal(created.statusCode, 201)
  const rca = created.json()
  t.match(rca, {
    status: 'draft',
    title: 'Checkout outage on Monday',
    summary: 'Checkout failed for 20 minutes.',
    rootCause: null,
    createdBy: responder!.userId,
    aiDrafted: false,
    editedFields: ['summary'],
    publishedAt: null,
  })
  t.same((await call('GET', `${rcasUrl}/${rca.id}`, bystander!)).json(), rca, 'any member reads')
  const count = async () => (await db.selectFrom('divinux.rcas').select('id').execute()).length
  const before = await count()
  const refusals: Array<[string, Promise<{ statusCode: number; json(): { code: string } }>, number, string]> = [
    ['an insights viewer', call('POST', rcasUrl, viewer!, { title: 'x' }), 403, 'FORBIDDEN'],
    ['a member with no insights role', call('POST', rcasUrl, bystander!, { title: 'x' }), 403, 'FORBIDDEN'],
    ['a stranger', call('POST', rcasUrl, stranger!, { title: 'x' }), 404, 'NOT_FOUND'],
    ['no title', call('POST', rcasUrl, responder!, { summary: 'x' }), 400, 'VALIDATION_FAILED'],
    ['an empty title', call('POST', rcasUrl, responder!, { title: '' }), 400, 'VALIDATION_FAILED'],
    ['an unknown field', call('POST', rcasUrl, responder!, { title: 'x', status: 'published' }), 400, 'VALIDATION_FAILED'],
  ]
  for (const [name, response, status, code] of refusals) {
    const answer = await response
    t.equal(answer.statusCode, status, name)
    t.equal(answer.json().code, code, name)
  }
  t.equal(await count(), before)
  t.equal((await call('GET', `/api/v1/organizations/${otherOrgId}/rcas/${rca.id}`, stranger!)).statusCode, 404, "another organization's id")
  t.equal((await call('GET', `${rcasUrl}/${rca.id}`, stranger!)).statusCode, 404)
  t.equal((await call('GET', `${rcasUrl}/not-a-uuid`, viewer!)).statusCode, 404)
})

t.test(
  'status moves draft → in_review → published, back to draft from review; anything else is a 409 naming the allowed moves',
  async (t) => {
    const rca = await createRca()
    const url = `${rcasUrl}/${rca.id}`
    const skip = await call('PATCH', url, responder!, { status: 'published' })
    t.equal(skip.statusCode, 409)
    t.match(skip.json(), { code: 'CONFLICT', message: 'an RCA in draft cannot move to published; allowed: in_review' })
    t.equal((await call('PATCH', url, responder!, { status: 'in_review' })).json().status, 'in_review')
    t.equal((await call('PATCH', url, responder!, { status: 'draft' })).json().status, 'draft')
    const edited = (
      await call('PATCH', url, responder!, { rootCause: 'A connection pool of 5', impact: '1,200 failed payments', status: 'in_review' })
    ).json()
    t.match(edited, { status: 'in_review', rootCause: 'A connection pool of 5', impact: '1,200 failed payments' })
    t.same(edited.editedFields, ['impact', 'rootCause'], 'the fields a person wrote are remembered')
    const published = (await call('PATCH', url, responder!, { status: 'published' })).json()
    t.match(published, { status: 'published' })
    t.ok(published.publishedAt)

    const frozen = await call('PATCH', url, responder!, { summary: 'rewritten' })
    t.equal(frozen.statusCode, 409)
    t.match(frozen.json(), { message: 'the RCA is published: it cannot change (its action items still can)' })
    t.equal((await call('PATCH', url, responder!, { status: 'draft' })).statusCode, 409, 'no way back from published')
    t.equal((await call('DELETE', url, responder!)).statusCode, 409, 'a published RCA is not deleted')
    t.equal((await call('GET', url, viewer!)).json().summary, null, 'nothing changed')
    t.equal((await call('PATCH', url, viewer!, { title: 'x' })).statusCode, 403)
    t.equal((await call('PATCH', url, responder!, {})).statusCode, 400, 'an empty change')
    t.equal((await call('PATCH', url, responder!, { status: 'archived' })).statusCode, 400)
  },
)

t.test('incidents are linked once each, from this organization only, and not once published', async (t) => {
  const rca = await createRca()
  const url = `${rcasUrl}/${rca.id}/incidents`
  const linked = await call('POST', url, responder!, { sourceProduct: 'alerting', incidentId: checkout.alertId })
  t.equal(linked.statusCode, 201)
  t.match(linked.json(), {
    sourceProduct: 'alerting',
    incidentId: checkout.alertId,
    linkedBy: responder!.userId,
    incident: { title: 'Checkout latency above 2s', priority: 'P3', status: 'open', service: 'checkout' },
  })
  const again = await call('POST', url, responder!, { sourceProduct: 'alerting', incidentId: checkout.alertId })
  t.equal(again.statusCode, 409)
  t.match(again.json(), { message: 'the incident is already linked to this RCA' })
  t.equal(
    (await call('POST', url, responder!, { sourceProduct: 'alerting', incidentId: theirAlert.id })).statusCode,
    404,
    "another organization's alert",
  )
  t.equal(
    (await call('POST', url, responder!, { sourceProduct: 'synthetics', incidentId: checkout.alertId })).statusCode,
    404,
    'not an incident of that surface',
  )
  t.equal((await call('POST', url, responder!, { sourceProduct: 'alerting', incidentId: 'alert-1' })).statusCode, 400)
  t.equal((await call('POST', url, viewer!, { sourceProduct: 'alerting', incidentId: search.alertId })).statusCode, 403)
  const second = (await call('POST', url, responder!, { sourceProduct: 'alerting', incidentId: search.alertId })).json()
  t.same(
    (await call('GET', url, viewer!)).json().data.map((link: { incidentId: string }) => link.incidentId),
    [checkout.alertId, search.alertId],
  )

  t.equal((await call('DELETE', `${url}/${second.id}`, responder!)).statusCode, 204)
  t.equal((await call('DELETE', `${url}/${second.id}`, responder!)).statusCode, 404, 'already gone')
  t.equal((await call('DELETE', `${url}/nope`, responder!)).statusCode, 404)
  t.equal((await call('GET', url, viewer!)).json().data.length, 1)
  t.equal((await call('GET', `/api/v1/organizations/${otherOrgId}/rcas/${rca.id}/incidents`, stranger!)).statusCode, 404)

  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'in_review' })
  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'published' })
  t.equal(
    (await call('POST', url, responder!, { sourceProduct: 'alerting', incidentId: search.alertId })).statusCode,
    409,
    'published: frozen',
  )
  t.equal((await call('DELETE', `${url}/${linked.json().id}`, responder!)).statusCode, 409)
})

t.test('action items: assigned to members, filtered, stamped when done, still editable once published', async (t) => {
  const rca = await createRca()
  const url = `${rcasUrl}/${rca.id}/action-items`
  const item = await call('POST', url, responder!, {
    title: 'Raise the pool to 50',
    assigneeUserId: viewer!.userId,
    priority: 'high',
    dueDate: '2026-12-01',
  })
  t.equal(item.statusCode, 201)
  t.match(item.json(), {
    title: 'Raise the pool to 50',
    assigneeUserId: viewer!.userId,
    status: 'open',
    priority: 'high',
    dueDate: '2026-12-01',
    completedAt: null,
    createdBy: responder!.userId,
  })
  const unassigned = (await call('POST', url, responder!, { title: 'Alert on pool saturation' })).json()
  t.match(unassigned, { assigneeUserId: null, status: 'open', priority: 'medium', dueDate: null })

  const notMember = await call('POST', url, responder!, { title: 'x', assigneeUserId: stranger!.userId })
  t.equal(notMember.statusCode, 400)
  t.match(notMember.json(), { code: 'VALIDATION_FAILED', message: 'body/assigneeUserId must be a member of the organization' })
  t.equal((await call('POST', url, responder!, { title: 'x', status: 'closed' })).statusCode, 400)
  t.equal((await call('POST', url, responder!, { title: 'x', dueDate: 'next week' })).statusCode, 400)
  t.equal((await call('POST', url, viewer!, { title: 'x' })).statusCode, 403)

  const itemUrl = `${url}/${item.json().id}`
  const done = (await call('PATCH', itemUrl, responder!, { status: 'done' })).json()
  t.equal(done.status, 'done')
  t.ok(done.completedAt)
  t.equal((await call('PATCH', itemUrl, responder!, { status: 'in_progress' })).json().completedAt, null, 'reopened')
  t.equal((await call('PATCH', itemUrl, responder!, { assigneeUserId: stranger!.userId })).statusCode, 400)
  t.same(
    (await call('GET', `${url}?status=in_progress`, viewer!)).json().data.map((row: { id: string }) => row.id),
    [item.json().id],
  )
  t.same(
    (await call('GET', `${url}?assigneeUserId=${viewer!.userId}`, viewer!)).json().data.map((row: { id: string }) => row.id),
    [item.json().id],
  )
  t.equal((await call('GET', url, bystander!)).json().data.length, 2)

  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'in_review' })
  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'published' })
  t.equal((await call('PATCH', itemUrl, responder!, { status: 'done' })).statusCode, 200, 'published, its items still move')
  t.equal((await call('DELETE', `${url}/${unassigned.id}`, responder!)).statusCode, 204)
  t.equal((await call('DELETE', `${url}/${unassigned.id}`, responder!)).statusCode, 404)
  t.equal((await call('PATCH', `${url}/${unassigned.id}`, responder!, { status: 'done' })).statusCode, 404)
  t.equal((await call('GET', `/api/v1/organizations/${otherOrgId}/rcas/${rca.id}/action-items`, stranger!)).statusCode, 404)
})

t.test('deleting a draft deletes its links and items', async (t) => {
  const rca = await createRca()
  await call('POST', `${rcasUrl}/${rca.id}/incidents`, responder!, { sourceProduct: 'alerting', incidentId: checkout.alertId })
  await call('POST', `${rcasUrl}/${rca.id}/action-items`, responder!, { title: 'x' })
  t.equal((await call('DELETE', `${rcasUrl}/${rca.id}`, viewer!)).statusCode, 403)
  t.equal((await call('DELETE', `${rcasUrl}/${rca.id}`, responder!)).statusCode, 204)
  t.equal((await call('GET', `${rcasUrl}/${rca.id}`, viewer!)).statusCode, 404)
  t.equal((await db.selectFrom('divinux.rcaIncidentLinks').select('id').where('rcaId', '=', rca.id).execute()).length, 0)
  t.equal((await db.selectFrom('divinux.rcaActionItems').select('id').where('rcaId', '=', rca.id).execute()).length, 0)
})

t.test('RCAs are listed and filtered; incidents are searched by words, time and surface', async (t) => {
  const all = (await call('GET', `${rcasUrl}?limit=100`, viewer!)).json()
  t.ok(all.meta.total >= 4)
  t.ok(all.data.every((row: { organizationId: string }) => row.organizationId === orgId))
  const published = (await call('GET', `${rcasUrl}?status=published`, viewer!)).json()
  t.ok(published.data.length >= 1 && published.data.every((row: { status: string }) => row.status === 'published'))
  t.same(
    (await call('GET', `${rcasUrl}?q=monday`, viewer!)).json().data.map((row: { title: string }) => row.title),
    ['Checkout outage on Monday'],
  )
  t.equal((await call('GET', `/api/v1/organizations/${otherOrgId}/rcas`, stranger!)).json().meta.total, 0)

  const found = (await call('GET', `${rcasUrl}/search-incidents?q=checkout%20P99`, viewer!)).json()
  t.same(
    found.data.map((row: { incidentId: string }) => row.incidentId),
    [checkout.alertId],
    'every word, in title or description; not another organization’s',
  )
  t.match(found.data[0], { sourceProduct: 'alerting', title: 'Checkout latency above 2s', service: 'checkout', resolvedAt: null })
  t.equal((await call('GET', `${rcasUrl}/search-incidents?from=2100-01-01T00:00:00Z`, viewer!)).json().meta.total, 0)
  t.equal((await call('GET', `${rcasUrl}/search-incidents?to=2100-01-01T00:00:00Z`, viewer!)).json().meta.total, 2)
  t.equal((await call('GET', `${rcasUrl}/search-incidents?sourceProduct=synthetics`, viewer!)).json().meta.total, 0)
  t.equal((await call('GET', `${rcasUrl}/search-incidents?q=100%25`, viewer!)).json().meta.total, 0, 'a % is a character, not a wildcard')
  t.equal((await call('GET', `${rcasUrl}/search-incidents`, stranger!)).statusCode, 404)
})

t.test('the export is Markdown ready for a wiki', async (t) => {
  const rca = await createRca({ title: 'Checkout | payments outage', summary: 'Payments failed.\nFor 20 minutes.' })
  await call('POST', `${rcasUrl}/${rca.id}/incidents`, responder!, { sourceProduct: 'alerting', incidentId: checkout.alertId })
  await call('POST', `${rcasUrl}/${rca.id}/action-items`, responder!, {
    title: 'Raise the pool | to 50',
    assigneeUserId: viewer!.userId,
    dueDate: '2026-12-01',
  })
  const exported = await call('GET', `${rcasUrl}/${rca.id}/export?format=markdown`, viewer!)
  t.equal(exported.statusCode, 200)
  t.match(exported.headers['content-type'], 'text/markdown; charset=utf-8')
  t.match(exported.headers['content-disposition'], 'attachment; filename="checkout-payments-outage.md"')
  const markdown = exported.body
  t.match(markdown, /^# Checkout \| payments outage\n\n- \*\*Status:\*\* draft\n/)
  t.match(markdown, /## Summary\n\nPayments failed.\nFor 20 minutes.\n/)
  t.match(markdown, /## Root cause\n\n_Not written yet._/)
  t.match(markdown, /\| alerting \| Checkout latency above 2s \| P3 \| \d{4}-/)
  t.match(markdown, `| Raise the pool \\| to 50 | ${viewer!.email} | medium | 2026-12-01 | Open |`)
  t.equal((await call('GET', `${rcasUrl}/${rca.id}/export?format=pdf`, viewer!)).statusCode, 400)
  t.equal((await call('GET', `/api/v1/organizations/${otherOrgId}/rcas/${rca.id}/export`, stranger!)).statusCode, 404)
})

t.test('statistics count documents and action items, and time incidents to publication', async (t) => {
  const rca = await createRca({ title: 'Timed' })
  await call('POST', `${rcasUrl}/${rca.id}/incidents`, responder!, { sourceProduct: 'alerting', incidentId: search.alertId })
  await db
    .updateTable('divinux.alerts')
    .set({ firstSeenAt: new Date(Date.now() - 3 * 3600_000) })
    .where('id', '=', search.alertId)
    .execute()
  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'in_review' })
  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'published' })
  await call('POST', `${rcasUrl}/${rca.id}/action-items`, responder!, {
    title: 'Late',
    assigneeUserId: responder!.userId,
    dueDate: '2020-01-01',
  })

  const stats = (await call('GET', `${rcasUrl}/stats`, bystander!)).json()
  const rows = await db.selectFrom('divinux.rcas').select(['status']).where('organizationId', '=', orgId).execute()
  t.same(stats.byStatus, {
    draft: rows.filter((row) => row.status === 'draft').length,
    in_review: rows.filter((row) => row.status === 'in_review').length,
    published: rows.filter((row) => row.status === 'published').length,
  })
  t.equal(stats.total, rows.length)
  t.ok(stats.publishedWithIncidents >= 1)
  t.ok(stats.medianSecondsToPublish > 0)
  t.ok(stats.actionItems.overdue >= 1)
  t.ok(stats.actionItems.open >= stats.actionItems.overdue)
  const late = stats.actionItemsByAssignee.find((row: { email: string | null }) => row.email === responder!.email)
  t.match(late, { assigneeUserId: responder!.userId, open: 1, overdue: 1, total: 1 })
  t.equal((await call('GET', `/api/v1/organizations/${otherOrgId}/rcas/stats`, stranger!)).json().total, 0)
})

t.test('an incident is shown in RCAs only to callers who may read it on its own surface', async (t) => {
  const rca = await createRca({ title: 'Visibility' })
  t.equal(
    (await call('POST', `${rcasUrl}/${rca.id}/incidents`, responder!, { sourceProduct: 'alerting', incidentId: checkout.alertId }))
      .statusCode,
    201,
  )

  t.equal(
    (await call('GET', `${rcasUrl}/search-incidents?q=checkout`, analyst!)).json().meta.total,
    0,
    'an insights responder without alerting viewer finds no alerts',
  )
  t.equal((await call('GET', `${rcasUrl}/search-incidents?q=checkout`, responder!)).json().meta.total, 1)
  const links = (await call('GET', `${rcasUrl}/${rca.id}/incidents`, analyst!)).json().data
  t.match(links, [{ sourceProduct: 'alerting', incidentId: checkout.alertId, incident: null }], 'the link, not the alert')
  t.match((await call('GET', `${rcasUrl}/${rca.id}/incidents`, responder!)).json().data, [
    { incident: { title: 'Checkout latency above 2s' } },
  ])
  const exported = (await call('GET', `${rcasUrl}/${rca.id}/export`, bystander!)).body
  t.notMatch(exported, 'Checkout latency above 2s')
  t.match(exported, 'not shown: reading it needs the alerting role viewer')
  const linking = await call('POST', `${rcasUrl}/${rca.id}/incidents`, analyst!, { sourceProduct: 'alerting', incidentId: search.alertId })
  t.equal(linking.statusCode, 404, 'an alert it may not read cannot be linked (nor its existence probed)')
  t.equal(
    (await call('GET', `${rcasUrl}/${rca.id}/export`, owner!)).body.includes('Checkout latency above 2s'),
    true,
    'the owner reads everything',
  )
})
