import { sql } from 'kysely'
import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// With billing on, what an organization's plan holds decides which products it may change:
// reads stay open, data stays, ingestion keeps 7 days of grace (issue 17).

const service = await startTestService(t, buildApp, {
  config: {
    billing: {
      secretKey: 'sk_test_unused',
      apiUrl: 'http://127.0.0.1:9',
      successUrl: 'https://a.example/',
      cancelUrl: 'https://a.example/',
    },
  },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'plans', {})
const owner = person('owner')
const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  app.inject({ method, url, headers: owner.headers, ...(payload ? { payload } : {}) })
const pages = `/api/v1/statuspages/organizations/${orgId}/pages`
const policies = `/api/v1/organizations/${orgId}/escalation-policies`
let slug = 0
const newPage = () => call('POST', pages, { name: 'Status', slug: `plans-${++slug}` })
const subscribe = (product: string, status: string, lapsedDaysAgo = 0) =>
  db
    .insertInto('core.orgProductSubscriptions')
    .values({ organizationId: orgId, product, plan: 'team', status, providerUpdatedAt: new Date(Date.now() - lapsedDaysAgo * 86_400_000) })
    .onConflict((conflict) =>
      conflict
        .columns(['organizationId', 'product'])
        .doUpdateSet({ status, providerUpdatedAt: new Date(Date.now() - lapsedDaysAgo * 86_400_000) }),
    )
    .execute()

t.test('an organization from before billing (exempt) has every product', async (t) => {
  t.equal((await newPage()).statusCode, 201)
})

t.test('without a plan, writes are 402 PLAN_REQUIRED and reads still answer', async (t) => {
  await sql`update core.organizations set billing_exempt = false where id = ${orgId}`.execute(db)
  const refused = await newPage()
  t.equal(refused.statusCode, 402)
  t.match(refused.json(), { code: 'PLAN_REQUIRED', message: /does not include statuspages/ })
  const listed = await call('GET', pages)
  t.equal(listed.statusCode, 200)
  t.equal(listed.json().meta.total, 1, 'the data stays')
})

t.test('a product’s own plan opens that product; the bundle opens all; a cancelled plan closes them again', async (t) => {
  await subscribe('statuspages', 'active')
  t.equal((await newPage()).statusCode, 201)
  t.equal((await call('POST', policies, { name: 'P', steps: [] })).statusCode, 402, 'alerting is not in the plan')
  await subscribe('bundle', 'past_due')
  t.not((await call('POST', policies, { name: 'P', steps: [] })).statusCode, 402, 'past due is still a plan (Stripe retries)')
  await subscribe('bundle', 'canceled')
  await subscribe('statuspages', 'canceled')
  t.equal((await newPage()).statusCode, 402)
  t.equal((await call('GET', pages)).json().meta.total, 2)
})

t.test('ingestion keeps working for 7 days after the alerting plan lapses, then pauses', async (t) => {
  await subscribe('bundle', 'active')
  const config = (await call('POST', `/api/v1/organizations/${orgId}/webhooks`, { name: 'Monitoring', format: 'generic' })).json()
  await subscribe('bundle', 'canceled', 3)
  const event = JSON.stringify({ title: 'Disk full', fingerprint: 'disk-1' })
  const within = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: event,
  })
  t.equal(within.statusCode, 202, within.body)

  // Another organization whose plan lapsed 8 days ago (each organization's answer is kept a minute).
  const late = await alertingOrganization(service, 'lapsed', {})
  const lateOwner = late.person('owner')
  const lateConfig = (
    await app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${late.orgId}/webhooks`,
      headers: lateOwner.headers,
      payload: { name: 'M', format: 'generic' },
    })
  ).json()
  await sql`update core.organizations set billing_exempt = false where id = ${late.orgId}`.execute(db)
  await db
    .insertInto('core.orgProductSubscriptions')
    .values({
      organizationId: late.orgId,
      product: 'alerting',
      plan: 'team',
      status: 'canceled',
      providerUpdatedAt: new Date(Date.now() - 8 * 86_400_000),
    })
    .execute()
  const after = await app.inject({
    method: 'POST',
    url: lateConfig.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: event,
  })
  t.equal(after.statusCode, 402)
  t.equal(after.json().code, 'PLAN_REQUIRED')
})
