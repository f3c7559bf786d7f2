import t from 'tap'
import { chatCompletion, startOpenAiServer, startTestService, type ChatReply, type ChatRequest } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { insightsHelpers, minutesAgo } from './insights-setup.js'
import { alertingOrganization } from './organization-setup.js'

const titleOf = (request: ChatRequest) => (JSON.parse(request.body.messages[1]!.content!.split('\n')[2]!) as { title: string }).title

/** An RCA draft: the deploy of version 2.4.0 from the record, named as the cause. */
function draftAnswer(request: ChatRequest): ChatReply {
  const record = JSON.parse(request.body.messages[1]!.content!.split('\n')[2]!) as {
    title: string
    deploys: Array<{ id: string; version: string }>
    incidents: Array<{ title: string }>
  }
  const suspect = record.deploys.find((deploy) => deploy.version === '2.4.0')
  const reply = {
    summary: `${record.incidents.map((incident) => incident.title).join(', ')}: checkout failed.`,
    impact: '- Payments failed for 12 minutes.',
    rootCause: `Deploy ${suspect?.version} exhausted the connection pool.`,
    timeline: '- 07:52 deploy 2.4.0\n- 08:00 errors began',
    suspectedDeployId: suspect?.id ?? null,
  }
  return { body: chatCompletion({ content: JSON.stringify(reply) }, { prompt_tokens: 900, completion_tokens: 150 }) }
}

/** The model server: how it answers depends on the incident it is asked about. */
function answer(request: ChatRequest): ChatReply {
  if (request.body.response_format?.json_schema?.name === 'rca_draft') return draftAnswer(request)
  const title = titleOf(request)
  if (title.startsWith('Malformed'))
    return { body: chatCompletion({ content: 'I think it was the deploy.' }, { prompt_tokens: 40, completion_tokens: 10 }) }
  if (title.startsWith('Rate limited'))
    return {
      status: 429,
      headers: { 'retry-after-ms': '1' },
      body: { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } },
    }
  if (title.startsWith('Slow')) return { delayMs: 3_000, body: chatCompletion({ content: '{}' }) }
  const toolReplies = request.body.messages.filter((message) => message.role === 'tool')
  if (toolReplies.length === 0)
    return { body: chatCompletion({ content: 'Deploys first, then the alerts.', toolCalls: ['get_deploys', 'get_alert_timelines'] }) }
  const { deploys } = JSON.parse(toolReplies[0]!.content!) as { deploys: Array<{ id: string; version: string; service: string }> }
  const suspect = deploys.find((deploy) => deploy.version === '2.4.0')
  const reply = {
    summary: `${title}: checkout is failing`,
    suspectDeploys: [
      ...(suspect
        ? [{ deployId: suspect.id, service: 'made-up', version: null, score: 1.7, reasons: ['8 minutes before the onset'] }]
        : []),
      { deployId: '00000000-0000-4000-8000-000000000000', service: 'checkout', version: '9.9.9', score: 0.9, reasons: ['invented'] },
    ],
    probableCause: { category: 'deploy', confidence: 0.8, statement: `Deploy ${suspect?.version} broke checkout`, service: 'checkout' },
    evidence: [{ claim: 'The deploy landed 8 minutes before the errors', resources: [{ type: 'deploy', id: suspect?.id ?? 'none' }] }],
    recommendations: ['Roll back', 'Add a canary'],
    severity: 'high',
  }
  return { body: chatCompletion({ content: JSON.stringify(reply) }) }
}

const model = await startOpenAiServer(t, answer)
const service = await startTestService(t, buildApp, {
  config: {
    ai: {
      openai: { apiKey: 'sk-loopback', baseUrl: model.baseUrl, model: 'incident-model', timeoutMs: 1_000 },
      retryLimit: 1,
      retryDelaySeconds: 1,
      pricePerMillionTokens: { input: 2, output: 8 },
      defaultMonthlyLimits: { tokens: 2_000_000, costUsd: 20 },
    },
  },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'openai', { viewer: { insights: 'viewer' } })
const [owner, viewer] = ['owner', 'viewer'].map(person)
const { createConfig, ingest, deploy, settledAnalyses } = insightsHelpers(service, orgId, owner!)
const pager = await createConfig({ name: 'Pager', defaultPriority: 'P1' })
const eventTypes = async (analysisId: string) =>
  (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/insights/${analysisId}/events`, headers: viewer!.headers }))
    .json()
    .data.map((event: { type: string }) => event.type)

t.test('through the OpenAI SDK: tool calls fetch the deploys, the answer names the one before the alert, tokens are billed', async (t) => {
  const culprit = await deploy(pager, {
    service: 'checkout',
    version: '2.4.0',
    commit: 'c0ffee',
    status: 'success',
    finishedAt: minutesAgo(8),
  })
  await deploy(pager, { service: 'checkout', version: '2.3.9', status: 'success', finishedAt: minutesAgo(90) })
  const { alertId } = await ingest(pager, {
    title: 'Checkout errors above 5%',
    service: 'checkout',
    labels: { kube_namespace: 'shop', __meta_x: 'pod-7' },
  })
  const [analysis] = await settledAnalyses(alertId)
  t.match(analysis, {
    status: 'completed',
    provider: 'openai',
    model: 'test-model',
    severity: 'high',
    suspectedDeployId: culprit.id,
    rootCause: 'Deploy 2.4.0 broke checkout',
    recommendations: '- Roll back\n- Add a canary',
    promptTokens: 200,
    completionTokens: 40,
    attempts: 1,
  })
  t.match(analysis!.findings, {
    suspectDeploys: [{ deployId: culprit.id, service: 'checkout', version: '2.4.0', score: 1 }],
    probableCause: { category: 'deploy', confidence: 0.8 },
  })
  t.equal(
    (analysis!.findings as { suspectDeploys: unknown[] }).suspectDeploys.length,
    1,
    'a deploy the tools never returned is dropped; what is known of a named one comes from the record',
  )
  t.same(await eventTypes(analysis!.id), ['requested', 'processing', 'step', 'step', 'step', 'completed'])
  const events = (
    await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/insights/${analysis!.id}/events`, headers: viewer!.headers })
  ).json().data as Array<{ data: { tool: string | null; reasoning: string | null; output: unknown } }>
  t.match(events[2]!.data, { tool: 'get_deploys', reasoning: 'Deploys first, then the alerts.', output: new RegExp(culprit.id) })
  t.match(events[3]!.data, { tool: 'get_alert_timelines' })
  t.match(events[4]!.data, { tool: null, output: { probableCause: { category: 'deploy' } } })
  const asked = model.requests.filter((request) => titleOf(request) === 'Checkout errors above 5%')
  t.equal(asked.length, 2, 'one round of tool calls, then the answer')
  t.equal(asked[0]!.authorization, 'Bearer sk-loopback')
  t.equal(asked[0]!.body.model, 'incident-model')
  t.same(
    asked[0]!.body.tools!.map((tool: { function: { name: string } }) => tool.function.name),
    [
      'get_service_dependencies',
      'get_alert_timelines',
      'get_deploys',
      'get_config_changes',
      'get_check_results',
      'get_status_components',
      'get_similar_incidents',
    ],
  )
  const incident = JSON.parse(asked[0]!.body.messages[1]!.content!.split('\n')[2]!) as { alerts: Array<{ labels: Record<string, string> }> }
  t.match(incident.alerts[0]!.labels, { kube_namespace: 'shop', __meta_x: 'pod-7' }, 'the model reads the labels as they were sent')

  const ledger = await db.selectFrom('divinux.aiUsage').selectAll().where('referenceId', '=', analysis!.id).execute()
  t.match(ledger, [{ feature: 'analysis', provider: 'openai', promptTokens: 200, completionTokens: 40 }])
  t.equal(Number(ledger[0]!.costUsd), 0.00072, '200 × $2 + 40 × $8 per million')
  const usage = (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/usage`, headers: viewer!.headers })).json()
  t.match(usage.usage, { analyses: 1, promptTokens: 200, completionTokens: 40, tokens: 240, estimatedCostUsd: 0.00072 })
})

t.test('a malformed reply, a lasting 429 and a timeout are retried once by the job, then the analysis fails', async (t) => {
  const titles = ['Malformed answers', 'Rate limited everywhere', 'Slow model']
  const alerts = await Promise.all(titles.map((title) => ingest(pager, { title, service: 'api' })))
  const settled = await Promise.all(alerts.map(({ alertId }) => settledAnalyses(alertId)))
  const [malformed, limited, slow] = settled.map(([analysis]) => analysis!)
  t.match(malformed, {
    status: 'failed',
    attempts: 2,
    error: 'the model answered with something other than JSON',
    promptTokens: 80,
    completionTokens: 20,
    summary: null,
  })
  t.match(limited, { status: 'failed', attempts: 2, error: 'the model server is rate limiting requests (429)', promptTokens: 0 })
  t.match(slow, { status: 'failed', attempts: 2, error: 'the model server did not answer in time' })
  for (const analysis of [malformed!, limited!, slow!]) {
    t.same(await eventTypes(analysis.id), ['requested', 'processing', 'retry_scheduled', 'processing', 'failed'], analysis.error ?? '')
  }
  t.equal(
    model.requests.filter((request) => titleOf(request) === 'Rate limited everywhere').length,
    6,
    'the SDK tried three times in each of the two attempts',
  )
  const spent = await db
    .selectFrom('divinux.aiUsage')
    .select(['promptTokens', 'completionTokens'])
    .where('referenceId', '=', malformed!.id)
    .execute()
  t.same(
    spent,
    [
      { promptTokens: 40, completionTokens: 10 },
      { promptTokens: 40, completionTokens: 10 },
    ],
    'tokens of failed attempts count against the budget',
  )
  const stats = (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/insights/stats`, headers: viewer!.headers })).json()
  t.match(stats, { byStatus: { completed: 1, failed: 3 }, tokens: { prompt: 280, completion: 60, total: 340 } })
})

t.test('an RCA draft through the OpenAI SDK names the deploy, and its tokens are billed', async (t) => {
  const rcasUrl = `/api/v1/organizations/${orgId}/rcas`
  const responder = await service.signIn('responder@openai.example')
  const member = await db
    .insertInto('core.organizationMembers')
    .values({ organizationId: orgId, userId: responder.userId, role: 'member' })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('core.orgProductRoles')
    .values([
      { organizationId: orgId, memberId: member.id, product: 'insights', role: 'responder' },
      { organizationId: orgId, memberId: member.id, product: 'alerting', role: 'viewer' },
    ])
    .execute()
  const culprit = await db
    .selectFrom('divinux.deployEvents')
    .select('id')
    .where('organizationId', '=', orgId)
    .where('version', '=', '2.4.0')
    .executeTakeFirstOrThrow()
  const alert = await db
    .selectFrom('divinux.alerts')
    .select('id')
    .where('organizationId', '=', orgId)
    .where('title', '=', 'Checkout errors above 5%')
    .executeTakeFirstOrThrow()
  const rca = (await app.inject({ method: 'POST', url: rcasUrl, headers: responder.headers, payload: { title: 'Checkout outage' } })).json()
  await app.inject({
    method: 'POST',
    url: `${rcasUrl}/${rca.id}/incidents`,
    headers: responder.headers,
    payload: { sourceProduct: 'alerting', incidentId: alert.id },
  })
  t.equal((await app.inject({ method: 'POST', url: `${rcasUrl}/${rca.id}/generate`, headers: responder.headers })).statusCode, 202)

  const deadline = Date.now() + 30_000
  let drafted = rca
  while (drafted.draftStatus !== 'completed' && drafted.draftStatus !== 'failed' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    drafted = (await app.inject({ method: 'GET', url: `${rcasUrl}/${rca.id}`, headers: responder.headers })).json()
  }
  t.match(drafted, {
    draftStatus: 'completed',
    aiDrafted: true,
    suspectedDeployId: culprit.id,
    rootCause: 'Deploy 2.4.0 exhausted the connection pool.',
    summary: 'Checkout errors above 5%: checkout failed.',
  })
  const asked = model.requests.find((request) => request.body.response_format?.json_schema?.name === 'rca_draft')!
  t.match(asked.body.messages[1]!.content, culprit.id, 'the deploys before the incident were in the record')
  t.match(
    asked.body.messages[1]!.content,
    /"analysis":\{"summary":"Checkout errors above 5%: checkout is failing"/,
    'so was the incident’s analysis',
  )
  const ledger = await db
    .selectFrom('divinux.aiUsage')
    .select(['feature', 'provider', 'promptTokens', 'completionTokens'])
    .where('referenceId', '=', rca.id)
    .execute()
  t.same(ledger, [{ feature: 'rca_draft', provider: 'openai', promptTokens: 900, completionTokens: 150 }])
})
