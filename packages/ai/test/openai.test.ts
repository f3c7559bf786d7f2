import t, { type Test } from 'tap'
import { AnalyzerError, createOpenAiAnalyzer, type EvidenceSource, type IncidentContext } from '@svc/ai'
import { chatCompletion, startOpenAiServer, type ChatReply } from '@svc/testkit'

const incident: IncidentContext = {
  sourceProduct: 'alerting',
  incidentId: '6f1f4a52-8f4e-4c2a-9a55-0c1b2d3e4f50',
  title: 'Checkout errors above 5%',
  description: null,
  service: 'checkout',
  priority: 'P1',
  status: 'open',
  startedAt: new Date('2026-11-23T08:00:00Z'),
  occurrences: 3,
  labels: { region: 'eu-west-1' },
}
const deploy = {
  id: 'a3c1e0a2-1111-4222-8333-944455556666',
  service: 'checkout',
  environment: 'production',
  version: '2.4.0',
  commitSha: '9f8e7d6',
  status: 'success',
  at: '2026-11-23T07:48:00Z',
  minutesBeforeIncident: 12,
}
const evidence: EvidenceSource = {
  recentDeploys: async () => [deploy],
  similarIncidents: async () => [],
  timeline: async () => [{ type: 'created', at: '2026-11-23T08:00:00Z', detail: 'Checkout errors above 5%' }],
}
const answer = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    summary: 'Checkout is failing.',
    rootCause: 'Deploy 2.4.0 of checkout.',
    recommendations: ['Roll back 2.4.0'],
    severity: 'critical',
    suspectedDeployId: deploy.id,
    ...overrides,
  })

async function analyzerAnswering(t: Test, replies: Array<ChatReply>, options: { timeoutMs?: number; maxRetries?: number } = {}) {
  const server = await startOpenAiServer(t, (_request, index) => replies[Math.min(index, replies.length - 1)] ?? { status: 500 })
  const analyzer = createOpenAiAnalyzer({
    apiKey: 'sk-test',
    baseUrl: server.baseUrl,
    model: 'test-model',
    timeoutMs: options.timeoutMs ?? 5_000,
    maxRetries: options.maxRetries ?? 0,
  })
  return { server, analyzer }
}

t.test('the model gathers evidence through tool calls, then answers in the schema', async (t) => {
  const { server, analyzer } = await analyzerAnswering(t, [
    { body: chatCompletion({ toolCalls: ['get_recent_deploys', 'get_incident_timeline'] }, { prompt_tokens: 120, completion_tokens: 15 }) },
    { body: chatCompletion({ content: answer() }, { prompt_tokens: 300, completion_tokens: 80 }, 'test-model-2026') },
  ])
  const result = await analyzer.analyzeIncident(incident, evidence)
  t.match(result, {
    summary: 'Checkout is failing.',
    rootCause: 'Deploy 2.4.0 of checkout.',
    recommendations: ['Roll back 2.4.0'],
    severity: 'critical',
    suspectedDeployId: deploy.id,
  })
  t.same(result.usage, { provider: 'openai', model: 'test-model-2026', promptTokens: 420, completionTokens: 95 })
  t.same(result.evidence.deploys, [deploy], 'what the tools returned is the evidence')
  t.equal(result.evidence.timeline.length, 1)
  t.same(result.evidence.similarIncidents, [], 'a tool not called contributes nothing')

  const [first, second] = server.requests
  t.equal(first!.authorization, 'Bearer sk-test')
  t.equal(first!.body.model, 'test-model')
  t.same(
    first!.body.tools!.map((tool) => tool.function.name),
    ['get_recent_deploys', 'get_similar_incidents', 'get_incident_timeline'],
  )
  t.match(first!.body.response_format, {
    type: 'json_schema',
    json_schema: {
      name: 'incident_analysis',
      strict: true,
      schema: { additionalProperties: false, required: ['summary', 'rootCause', 'recommendations', 'severity', 'suspectedDeployId'] },
    },
  })
  t.match(first!.body.messages[1]!.content, /"title":"Checkout errors above 5%"/)
  const toolMessages = second!.body.messages.filter((message) => message.role === 'tool')
  t.equal(toolMessages.length, 2)
  t.match(toolMessages[0]!.content, deploy.id, 'the deploys went back to the model')
})

t.test('a deploy the tools never returned is not taken as the suspect', async (t) => {
  const { analyzer } = await analyzerAnswering(t, [{ body: chatCompletion({ content: answer({ suspectedDeployId: 'made-up' }) }) }])
  t.equal((await analyzer.analyzeIncident(incident, evidence)).suspectedDeployId, null)
})

async function failure(t: Test, replies: ChatReply[], options?: { timeoutMs?: number; maxRetries?: number }): Promise<AnalyzerError> {
  const { analyzer } = await analyzerAnswering(t, replies, options)
  try {
    await analyzer.analyzeIncident(incident, evidence)
  } catch (error) {
    if (error instanceof AnalyzerError) return error
    throw error
  }
  throw new Error('the analysis did not fail')
}

t.test('a malformed reply is a retryable failure that still counts its tokens', async (t) => {
  const notJson = await failure(t, [
    { body: chatCompletion({ content: 'The root cause is probably the deploy.' }, { prompt_tokens: 50, completion_tokens: 9 }) },
  ])
  t.match(notJson, {
    retryable: true,
    message: 'the model answered with something other than JSON',
    usage: { provider: 'openai', promptTokens: 50, completionTokens: 9 },
  })
  const offSchema = await failure(t, [{ body: chatCompletion({ content: answer({ severity: 'catastrophic' }) }) }])
  t.match(offSchema, { retryable: true, message: /does not match the schema \(\/severity/ })
  const noChoices = await failure(t, [{ body: { ...chatCompletion({ content: answer() }), choices: [] } }])
  t.match(noChoices, { retryable: true, message: 'the model answered with no choices' })
  const garbage = await failure(t, [{ raw: '<html>bad gateway</html>', status: 200 }])
  t.match(garbage, { retryable: true, message: /answer could not be read/ }, 'a body that is not JSON at all')
})

t.test('a slow server times out, retryably', async (t) => {
  const error = await failure(t, [{ body: chatCompletion({ content: answer() }), delayMs: 1_000 }], { timeoutMs: 150 })
  t.match(error, { retryable: true, message: 'the model server did not answer in time' })
})

t.test('rate limits: the SDK honours Retry-After, and a lasting 429 is a retryable failure', async (t) => {
  const limited = {
    status: 429,
    headers: { 'retry-after-ms': '10' },
    body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
  }
  const { server, analyzer } = await analyzerAnswering(t, [limited, { body: chatCompletion({ content: answer() }) }], { maxRetries: 2 })
  t.equal((await analyzer.analyzeIncident(incident, evidence)).severity, 'critical')
  t.equal(server.requests.length, 2, 'answered on the SDK’s retry')
  const lasting = await failure(t, [limited], { maxRetries: 0 })
  t.match(lasting, { retryable: true, message: 'the model server is rate limiting requests (429)' })
})

t.test('a refused key or a server error: only the latter may get better', async (t) => {
  const refused = await failure(t, [
    { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } },
  ])
  t.match(refused, { retryable: false, message: /answered 401/ })
  const broken = await failure(t, [{ status: 503, body: { error: { message: 'overloaded' } } }])
  t.match(broken, { retryable: true, message: /answered 503/ })
  const unreachable = createOpenAiAnalyzer({
    apiKey: 'sk-test',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'm',
    timeoutMs: 1_000,
    maxRetries: 0,
  })
  await t.rejects(unreachable.analyzeIncident(incident, evidence), {
    name: 'AnalyzerError',
    retryable: true,
    message: /could not be reached/,
  })
})

t.test('a model that only ever calls tools is stopped', async (t) => {
  const error = await failure(t, [{ body: chatCompletion({ toolCalls: ['get_similar_incidents', 'no_such_tool'] }) }])
  t.match(error, { retryable: true, message: 'the model kept calling tools for 5 rounds without answering', usage: { promptTokens: 500 } })
})

t.test('an RCA draft answers in its own schema; a bad answer is a retryable failure with its tokens', async (t) => {
  const context = { title: 'Monday', incidents: [{ incident, timeline: [], analysis: null }], deploys: [deploy], similarIncidents: [] }
  const sections = { summary: 's', impact: 'i', rootCause: 'r', timeline: 't' }
  const { server, analyzer } = await analyzerAnswering(t, [
    {
      body: chatCompletion(
        { content: JSON.stringify({ ...sections, suspectedDeployId: deploy.id }) },
        { prompt_tokens: 700, completion_tokens: 90 },
      ),
    },
  ])
  t.same(await analyzer.draftRca(context), {
    ...sections,
    suspectedDeployId: deploy.id,
    usage: { provider: 'openai', model: 'test-model', promptTokens: 700, completionTokens: 90 },
  })
  t.match(server.requests[0]!.body.response_format, { json_schema: { name: 'rca_draft', strict: true } })
  const invented = await analyzerAnswering(t, [
    { body: chatCompletion({ content: JSON.stringify({ ...sections, suspectedDeployId: 'nope' }) }) },
  ])
  t.equal((await invented.analyzer.draftRca(context)).suspectedDeployId, null)
  const bad = await analyzerAnswering(t, [
    { body: chatCompletion({ content: JSON.stringify({ summary: 's' }) }, { prompt_tokens: 10, completion_tokens: 2 }) },
  ])
  await t.rejects(bad.analyzer.draftRca(context), {
    name: 'AnalyzerError',
    retryable: true,
    message: /does not match the schema/,
    usage: { promptTokens: 10, completionTokens: 2 },
  })
  const empty = await analyzerAnswering(t, [{ body: { ...chatCompletion({ content: '{}' }), choices: [] } }])
  await t.rejects(empty.analyzer.draftRca(context), { name: 'AnalyzerError', message: 'the model answered with no choices' })
  const refused = await analyzerAnswering(t, [{ status: 401, body: { error: { message: 'bad key' } } }])
  await t.rejects(refused.analyzer.draftRca(context), { name: 'AnalyzerError', retryable: false })
})
