import t from 'tap'
import { sql } from 'kysely'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'catalog', { manager: 'manager', viewer: 'viewer' })
const [owner, manager, viewer, stranger] = ['owner', 'manager', 'viewer', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
const services = `${base}/services`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const team = (await call(manager!, 'POST', `${base}/teams`, { name: 'Payments team' })).json()
const policy = (
  await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Checkout on-call',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: owner!.userId }] }],
  })
).json()
const checkoutFields = {
  key: 'Checkout',
  name: 'Checkout',
  description: 'Takes the money',
  ownerTeamId: team.id,
  escalationPolicyId: policy.id,
  tier: 1,
  tags: ['payments', 'customer-facing'],
  links: { runbook: 'https://runbooks.example.com/checkout', repository: 'https://git.example.com/shop/checkout', chat: '#checkout' },
  aliases: ['checkout-api', 'SVC-Checkout'],
}

t.test('a manager registers a service; its key and aliases are one name each, kept lower-case', async (t) => {
  const created = await call(manager!, 'POST', services, checkoutFields)
  t.equal(created.statusCode, 201, created.body)
  t.match(created.json(), {
    key: 'checkout',
    name: 'Checkout',
    ownerTeamId: team.id,
    escalationPolicyId: policy.id,
    tier: 1,
    aliases: ['checkout-api', 'svc-checkout'],
    links: { chat: '#checkout' },
    createdBy: manager!.userId,
  })
  const id = created.json().id
  t.match((await call(viewer!, 'GET', `${services}?tag=payments`)).json(), { data: [{ id }], meta: { total: 1 } })
  t.match((await call(viewer!, 'GET', `${services}?q=svc-check`)).json(), { data: [{ id }] }, 'found by an alias')
  t.match((await call(viewer!, 'GET', `${services}/${id}`)).json(), { key: 'checkout' })
  const audited = await db.selectFrom('core.auditLogs').select(['action']).where('entityId', '=', id).execute()
  t.same(audited, [{ action: 'service.created' }])

  const refused: Array<[Who, object, number, RegExp]> = [
    [viewer!, { key: 'search' }, 403, /alerting role manager/],
    [manager!, { key: 'no spaces' }, 400, /key/],
    [manager!, { key: 'search', links: { runbook: 'javascript:alert(1)' } }, 400, /links\/runbook/],
    [manager!, { key: 'search', ownerTeamId: '00000000-0000-4000-8000-000000000000' }, 400, /ownerTeamId/],
    [manager!, { key: 'search', aliases: ['CHECKOUT-API'] }, 409, /aliases: checkout-api already names the service checkout/],
    [manager!, { key: 'svc-checkout' }, 409, /key: svc-checkout already names the service checkout/],
    [manager!, { key: 'search', aliases: ['search'] }, 400, /aliases/],
    [manager!, { key: 'search', tier: 5 }, 400, /tier/],
  ]
  for (const [who, payload, status, message] of refused) {
    const response = await call(who, 'POST', services, payload)
    t.equal(response.statusCode, status, JSON.stringify(payload))
    t.match(response.json().message, message)
  }
  t.equal((await call(viewer!, 'GET', services)).json().meta.total, 1, 'refusals register nothing')
  t.equal((await call(stranger!, 'GET', services)).statusCode, 404)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/services/${id}`)).statusCode, 404, 'another organization’s')

  const renamed = await call(manager!, 'PATCH', `${services}/${id}`, {
    aliases: ['checkout-api', 'svc-checkout', 'shop-checkout'],
    tier: 2,
  })
  t.match(renamed.json(), { tier: 2, aliases: ['checkout-api', 'svc-checkout', 'shop-checkout'] })
  t.equal((await call(manager!, 'PATCH', `${services}/${id}`, {})).statusCode, 400, 'a change names something')
})

t.test('an alert whose config names no policy pages its service’s; an unknown name is listed, one call from the catalog', async (t) => {
  const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'No policy' })).json()
  const fire = async (body: object) =>
    (await app.inject({ method: 'POST', url: config.ingestPath, headers: { 'content-type': 'application/json' }, payload: body })).json()
      .alertId as string
  const escalationOf = (alertId: string) =>
    until('the escalation to start', async () => {
      const { escalation } = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json()
      return escalation && escalation.state !== 'pending' && escalation
    })

  const checkout = await fire({ title: 'Checkout 500s', service: 'SVC-Checkout', priority: 'P3' })
  t.match(await escalationOf(checkout), { policyId: policy.id, state: 'active' }, 'routed by an alias, whatever its case')
  const page = await until('the page e-mail', () =>
    db
      .selectFrom('core.outbox')
      .select('bodyText')
      .where('kind', '=', 'alert.page')
      .where('channel', '=', 'email')
      .where('subject', '=', '[P3] Checkout 500s')
      .executeTakeFirst(),
  )
  t.match(page.bodyText, /^Service: SVC-Checkout \(owned by Payments team, tier 2\)$/m, 'the page names the owner')
  t.match(page.bodyText, /^Runbook: https:\/\/runbooks\.example\.com\/checkout$/m, 'and the catalog’s runbook, the sender giving none')

  const payments = await fire({ title: 'Payments slow', service: 'Payments', priority: 'P3' })
  t.match(await escalationOf(payments), { state: 'unrouted', note: /neither the config nor the alert’s service/ })
  const unregistered = (await call(viewer!, 'GET', `${services}/unregistered`)).json().data
  t.match(unregistered, [{ name: 'Payments', alerts: 1 }])
  t.notOk(
    unregistered.some((row: { name: string }) => row.name === 'SVC-Checkout'),
    'a registered name is not listed',
  )

  t.equal((await call(manager!, 'POST', services, { key: 'payments', escalationPolicyId: policy.id })).statusCode, 201)
  t.same((await call(viewer!, 'GET', `${services}/unregistered`)).json().data, [], 'adopted')
  const later = await fire({ title: 'Payments slower', service: 'payments', priority: 'P3', dedupKey: 'payments-2' })
  t.match(await escalationOf(later), { policyId: policy.id, state: 'active' })
})

t.test('an alert’s command room names its service’s owner and runbook', async (t) => {
  const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Command rooms' })).json()
  const fired = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: { title: 'Checkout API down', service: 'checkout-api', priority: 'P2' },
  })
  const room = (await call(viewer!, 'GET', `${base}/alerts/${fired.json().alertId}/command-room`)).json()
  t.same(room.service, { key: 'checkout', ownerTeam: 'Payments team', tier: 2, runbook: 'https://runbooks.example.com/checkout' })
})

t.test('removing a service leaves its alerts their names', async (t) => {
  const listed = (await call(viewer!, 'GET', `${services}?q=payments`)).json().data as Array<{ id: string; key: string }>
  const payments = listed.find((row) => row.key === 'payments')!
  t.equal((await call(viewer!, 'DELETE', `${services}/${payments.id}`)).statusCode, 403)
  t.equal((await call(manager!, 'DELETE', `${services}/${payments.id}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${services}/${payments.id}`)).statusCode, 404)
  t.match((await call(viewer!, 'GET', `${services}/unregistered`)).json().data, [{ name: 'Payments' }])
})

t.test('a service depends on others by key; correlation follows the edges by any of their names', async (t) => {
  const database = (await call(manager!, 'POST', services, { key: 'orders-db', aliases: ['pg-orders'] })).json()
  const created = await call(manager!, 'POST', services, { key: 'orders', aliases: ['svc-orders'], dependsOn: ['Orders-DB'] })
  t.equal(created.statusCode, 201, created.body)
  const orders = created.json()
  t.same(orders.dependsOn, ['orders-db'], 'by key, lower-cased')
  const unknown = await call(manager!, 'PATCH', `${services}/${orders.id}`, { dependsOn: ['orders-db', 'ledger'] })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /dependsOn no service has the key ledger/)
  const itself = await call(manager!, 'PATCH', `${services}/${orders.id}`, { dependsOn: ['orders'] })
  t.match(itself.json(), { statusCode: 400, message: /dependsOn names the service itself/ })
  t.same((await call(viewer!, 'GET', `${services}/${orders.id}`)).json().dependsOn, ['orders-db'], 'a refused change changes nothing')

  // The map's own API, as clients wrote it before the catalog: a name no service answers to registers one.
  const legacy = await call(manager!, 'POST', `${base}/service-dependencies`, { service: 'Storefront UI', dependsOn: 'SVC-Orders' })
  t.equal(legacy.statusCode, 201, legacy.body)
  t.match(legacy.json(), { service: 'storefront-ui', dependsOn: 'orders' })
  const [storefront] = (await call(viewer!, 'GET', `${services}?q=storefront`)).json().data
  t.match(storefront, { key: 'storefront-ui', name: 'Storefront UI', aliases: ['storefront ui'], dependsOn: ['orders'] })
  const aliased = await call(manager!, 'PATCH', `${services}/${storefront.id}`, { aliases: [...storefront.aliases, 'Storefront Web'] })
  t.same(aliased.json().aliases, ['storefront ui', 'storefront web'], 'an alias is any name alerts carry, as the register kept it')
  const map = (await call(viewer!, 'GET', `${base}/service-dependencies`)).json().data
  t.match(map, [
    { service: 'orders', dependsOn: 'orders-db' },
    { service: 'storefront-ui', dependsOn: 'orders' },
  ])

  const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Orders' })).json()
  const fire = async (body: object) =>
    (await app.inject({ method: 'POST', url: config.ingestPath, headers: { 'content-type': 'application/json' }, payload: body })).json()
      .alertId as string
  const linkOf = (alertId: string) =>
    until('the alert’s incident', () =>
      db.selectFrom('divinux.incidentAlerts').select(['incidentId', 'rule', 'matched']).where('alertId', '=', alertId).executeTakeFirst(),
    )
  const cause = await linkOf(await fire({ title: 'Orders database down', service: 'PG-Orders', priority: 'P1' }))
  const symptom = await linkOf(await fire({ title: 'Orders failing', service: 'svc-orders', priority: 'P4' }))
  t.match(symptom, {
    incidentId: cause.incidentId,
    rule: 'dependency',
    matched: { service: 'svc-orders', relatedService: 'PG-Orders', direction: 'depends_on' },
  })

  const cleared = await call(manager!, 'PATCH', `${services}/${orders.id}`, { dependsOn: [] })
  t.same(cleared.json().dependsOn, [])
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('changes')
    .where('entityId', '=', orders.id)
    .where('action', '=', 'service.updated')
    .executeTakeFirstOrThrow()
  t.match(audit.changes, { before: { dependsOn: ['orders-db'] }, after: { dependsOn: [] } })
  t.equal((await call(manager!, 'DELETE', `${services}/${database.id}`)).statusCode, 204)
  t.same(
    (await call(viewer!, 'GET', `${base}/service-dependencies`)).json().data.map((edge: { service: string }) => edge.service),
    ['storefront-ui'],
  )
})

const catalogInfo = `# a Backstage catalog: a system of two components and a database resource
apiVersion: backstage.io/v1alpha1
kind: System
metadata:
  name: shop
  title: The shop
spec:
  owner: group:default/payments-team
---
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: Storefront
  description: What customers see
  tags: [web]
  annotations:
    github.com/project-slug: acme/storefront
    divinux.io/tier: "2"
    divinux.io/aliases: storefront-web, sf
  links:
    - url: https://grafana.acme.example/d/storefront
      title: Storefront overview
      icon: dashboard
    - url: https://wiki.acme.example/runbooks/storefront
      title: Runbook
spec:
  type: website
  lifecycle: production
  owner: payments-team
  system: shop
  dependsOn: [component:ledger, resource:default/orders-database]
---
apiVersion: backstage.io/v1beta1
kind: Component
metadata:
  name: ledger
spec:
  type: service
  lifecycle: experimental
  owner: group:nobody
  system: shop
---
apiVersion: backstage.io/v1alpha1
kind: Resource
metadata:
  name: orders-database
spec:
  type: database
  owner: payments-team
`

t.test('a Backstage catalog imports as services, with owners, links and dependencies; importing again changes nothing', async (t) => {
  const importing = (body: string, who: Who = manager!) =>
    app.inject({
      method: 'POST',
      url: `${services}/import/backstage`,
      headers: { ...who.headers, 'content-type': 'application/yaml' },
      payload: body,
    })
  t.equal((await importing(catalogInfo, viewer!)).statusCode, 403)
  const first = await importing(catalogInfo)
  t.equal(first.statusCode, 200, first.body)
  t.same(first.json(), {
    created: ['shop', 'storefront', 'ledger'],
    updated: [],
    unchanged: [],
    warnings: [
      'Resource:orders-database: only Component and System entities are imported',
      'ledger: its owner group:nobody is no team of the organization',
      'storefront: depends on orders-database, which is no service of the organization',
    ],
  })
  const byKey = async (key: string) =>
    (await call(viewer!, 'GET', `${services}?q=${key}`)).json().data.find((row: { key: string }) => row.key === key)
  t.match(await byKey('storefront'), {
    name: 'Storefront',
    description: 'What customers see',
    ownerTeamId: team.id,
    tier: 2,
    tags: ['web', 'lifecycle:production', 'system:shop'],
    links: {
      dashboard: 'https://grafana.acme.example/d/storefront',
      runbook: 'https://wiki.acme.example/runbooks/storefront',
      repository: 'https://github.com/acme/storefront',
    },
    aliases: ['storefront-web', 'sf'],
    dependsOn: ['ledger'],
  })
  t.match(
    await byKey('shop'),
    { name: 'The shop', ownerTeamId: team.id, dependsOn: ['ledger', 'storefront'] },
    'a system depends on its components',
  )
  t.match(await byKey('ledger'), { ownerTeamId: null, tags: ['lifecycle:experimental', 'system:shop'] })

  const again = await importing(catalogInfo)
  t.match(again.json(), { created: [], updated: [], unchanged: ['shop', 'storefront', 'ledger'] }, 'idempotent')
  const audits = await db
    .selectFrom('core.auditLogs')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('action', 'in', ['service.created', 'service.updated'])
    .where('organizationId', '=', orgId)
    .executeTakeFirstOrThrow()

  const changed = await importing(catalogInfo.replace('What customers see', 'What shoppers see'))
  t.match(changed.json(), { updated: ['storefront'], unchanged: ['shop', 'ledger'] })
  const after = await db
    .selectFrom('core.auditLogs')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('action', 'in', ['service.created', 'service.updated'])
    .where('organizationId', '=', orgId)
    .executeTakeFirstOrThrow()
  t.equal(after.n, audits.n + 1, 'one change, one audit entry')

  const wrong = await importing(
    'apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: Pod\n',
  )
  t.equal(wrong.statusCode, 400)
  t.match(wrong.json().message, /^document 2: apiVersion must be backstage\.io/)
  const tooLong = await importing(
    `apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: long\n  title: ${'x'.repeat(120)}\n`,
  )
  t.match(tooLong.json(), { statusCode: 400, message: /^long: name / })
  t.notOk(await byKey('ok'), 'a refused import registers nothing')
})
