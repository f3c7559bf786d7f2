import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { insightsHelpers } from './insights-setup.js'
import { alertingOrganization } from './organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const { orgId, otherOrgId, person } = await alertingOrganization(service, 'budgets', {
  responder: { insights: 'responder' },
  bystander: null,
})
const [owner, responder, bystander, stranger] = ['owner', 'responder', 'bystander', 'stranger'].map(person)
const { createConfig, ingest, settledAnalyses, queueDrained } = insightsHelpers(service, orgId, owner!)
const usageUrl = `/api/v1/organizations/${orgId}/usage`
const getUsage = async (who = bystander!) => (await app.inject({ method: 'GET', url: usageUrl, headers: who.headers })).json()
const patchUsage = (payload: unknown, who = owner!) =>
  app.inject({ method: 'PATCH', url: usageUrl, headers: who.headers, payload: payload as object })
const config = await createConfig({ name: 'Generic', defaultPriority: 'P3' })
const requestFor = async (title: string) => {
  const { alertId } = await ingest(config, { title })
  return {
    alertId,
    response: await app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/insights`,
      headers: responder!.headers,
      payload: { incidentId: alertId, sourceProduct: 'alerting' },
    }),
  }
}

t.test('with no budget set, usage is counted and only the default caps apply', async (t) => {
  const usage = await getUsage()
  const now = new Date()
  t.same(usage.period, {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
  })
  t.same(usage.usage, { analyses: 0, promptTokens: 0, completionTokens: 0, tokens: 0, estimatedCostUsd: 0 })
  t.same(usage.limits, { monthlyAnalyses: null, monthlyTokens: null, monthlyCostUsd: null })
  t.same(
    usage.effectiveLimits,
    { monthlyAnalyses: null, monthlyTokens: 2_000_000, monthlyCostUsd: 20 },
    'the default caps of the environment',
  )
  t.same(usage.reserved, { tokens: 0, estimatedCostUsd: 0 })
  t.same(usage.alertThresholds, [50, 80, 100])
  t.match(usage, { percentUsed: 0, limitReached: null, events: [] })
  t.equal((await app.inject({ method: 'GET', url: usageUrl, headers: stranger!.headers })).statusCode, 404, 'not a member')
})

t.test('only organization admins and owners set limits; bad limits change nothing', async (t) => {
  const cases: Array<[string, unknown, typeof owner, number]> = [
    ['a member', { limits: { monthlyAnalyses: 5 } }, bystander, 403],
    ['an insights responder', { limits: { monthlyAnalyses: 5 } }, responder, 403],
    ['a stranger', { limits: { monthlyAnalyses: 5 } }, stranger, 404],
    ['a negative limit', { limits: { monthlyAnalyses: -1 } }, owner, 400],
    ['a fractional analysis limit', { limits: { monthlyAnalyses: 1.5 } }, owner, 400],
    ['a threshold above 100', { alertThresholds: [50, 120] }, owner, 400],
    ['a threshold of 0', { alertThresholds: [0] }, owner, 400],
    ['repeated thresholds', { alertThresholds: [80, 80] }, owner, 400],
    ['an unknown limit', { limits: { monthlyWidgets: 3 } }, owner, 400],
    ['an unknown field', { budget: 3 }, owner, 400],
    ['nothing', {}, owner, 400],
  ]
  for (const [name, payload, who, status] of cases) t.equal((await patchUsage(payload, who)).statusCode, status, name)
  t.equal((await db.selectFrom('divinux.tenantBudgets').select('organizationId').execute()).length, 0)
  const theirs = await app.inject({
    method: 'PATCH',
    url: `/api/v1/organizations/${otherOrgId}/usage`,
    headers: owner!.headers,
    payload: { limits: { monthlyAnalyses: 1 } },
  })
  t.equal(theirs.statusCode, 404, "another organization's budget")
})

t.test('thresholds are recorded once per period; at the limit, manual requests get 402 and automatic ones are skipped', async (t) => {
  const set = await patchUsage({ limits: { monthlyAnalyses: 2, monthlyCostUsd: 12.5 }, alertThresholds: [100, 50] })
  t.equal(set.statusCode, 200)
  t.match(set.json(), {
    limits: { monthlyAnalyses: 2, monthlyTokens: null, monthlyCostUsd: 12.5 },
    alertThresholds: [50, 100],
    percentUsed: 0,
    limitReached: null,
  })
  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'actorUserId', 'product'])
    .where('organizationId', '=', orgId)
    .where('entityType', '=', 'tenant_budget')
    .execute()
  t.match(audit, [{ action: 'tenant_budget.updated', actorUserId: owner!.userId, product: 'insights' }])

  const first = await requestFor('Slow search results')
  t.equal(first.response.statusCode, 202)
  await settledAnalyses(first.alertId)
  t.match(await getUsage(), {
    usage: { analyses: 1 },
    percentUsed: 50,
    limitReached: null,
    events: [{ type: 'threshold_crossed', threshold: 50, data: { percentUsed: { analyses: 50, cost: 0 } } }],
  })

  const second = await requestFor('Slow checkout')
  t.equal(second.response.statusCode, 202)
  await settledAnalyses(second.alertId)
  const full = await getUsage()
  t.match(full, { usage: { analyses: 2 }, percentUsed: 100, limitReached: 'analyses' })
  t.same(
    full.events.map((event: { threshold: number }) => event.threshold),
    [50, 100],
  )

  const refused = await requestFor('Slow login')
  t.equal(refused.response.statusCode, 402)
  t.match(refused.response.json(), {
    statusCode: 402,
    code: 'BUDGET_EXCEEDED',
    message: "the organization's monthly AI analyses limit is reached",
  })
  t.equal((await db.selectFrom('divinux.analyses').select('id').where('incidentId', '=', refused.alertId).execute()).length, 0)

  const urgent = await createConfig({ name: 'Pager', defaultPriority: 'P1' })
  const { alertId } = await ingest(urgent, { title: 'Everything is down' })
  await queueDrained()
  t.equal(
    (await db.selectFrom('divinux.analyses').select('id').where('incidentId', '=', alertId).execute()).length,
    0,
    'the P1 was not analyzed',
  )
  const skipped = (await getUsage()).events.filter((event: { type: string }) => event.type === 'analysis_skipped')
  t.match(skipped, [
    {
      type: 'analysis_skipped',
      threshold: null,
      data: { reason: 'budget_exceeded', limit: 'analyses', sourceProduct: 'alerting', incidentId: alertId },
    },
  ])
  t.equal(
    (await getUsage()).events.filter((event: { type: string }) => event.type === 'threshold_crossed').length,
    2,
    'each threshold once',
  )
  const paged = (await app.inject({ method: 'GET', url: `${usageUrl}?limit=1&page=2`, headers: bystander!.headers })).json()
  t.match(
    paged,
    { eventsMeta: { page: 2, limit: 1, total: 3 }, events: [{ type: 'threshold_crossed', threshold: 100 }] },
    'the events are paged',
  )

  const lifted = await patchUsage({ limits: { monthlyAnalyses: null } })
  t.match(lifted.json(), { limits: { monthlyAnalyses: null, monthlyCostUsd: 12.5 }, limitReached: null })
  t.equal((await requestFor('Slow logout')).response.statusCode, 202, 'without the limit, requests pass again')
  await queueDrained()
})

t.test('a token limit of zero stops analyses at once; lowering a limit records the thresholds it crosses', async (t) => {
  const response = await patchUsage({ limits: { monthlyTokens: 0 }, alertThresholds: [25, 50, 75, 100] }, owner)
  t.match(response.json(), { limitReached: 'tokens', percentUsed: 100 })
  t.same(
    (
      await db
        .selectFrom('divinux.usageEvents')
        .select('threshold')
        .where('organizationId', '=', orgId)
        .where('type', '=', 'threshold_crossed')
        .orderBy('threshold')
        .execute()
    ).map((row) => row.threshold),
    [25, 50, 75, 100],
  )
  t.equal((await requestFor('Slow everything')).response.statusCode, 402)
})
