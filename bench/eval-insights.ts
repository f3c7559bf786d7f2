// `pnpm eval:insights` (issue 30): replays the evaluation set (bench/eval/insights-scenarios.ts,
// 64 synthetic incidents with known causes, seed EVAL_SEED or 2026) through the product API on a
// fresh PostgreSQL database over real HTTP: each scenario is an organization of its own with
// its dependency map, deploys from the deploy ingestion endpoint, and alerts in the formats real
// senders use (signed). Correlation groups the alerts into an incident; the investigation of
// that incident is requested through `POST /insights` and read back when it completes.
// Reported, for the offline planner and (when OPENAI_API_KEY is set) for the model:
// deploy-attribution precision, recall and F1; accuracy on incidents with no deploy cause;
// cause-category accuracy; grouping precision/recall/F1 of the scenario's alerts.
// Targets for the offline planner: F1 ≥ 0.85, no-deploy accuracy ≥ 0.9, category accuracy ≥ 0.7.
// EVAL_PGLITE=1 runs it on the embedded database instead; EVAL_COUNT changes the size of the set; EVAL_VERBOSE=1 prints every scenario, not only the misses.
import { createHmac } from 'node:crypto'
import { DEFAULT_AI_CONFIG, type AiConfig } from '@svc/config'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
import { createBenchDatabase } from './database.js'
import { generateScenarios, type Scenario, type ScenarioAlert, type ScenarioDeploy } from './eval/insights-scenarios.js'

const SEED = Number(process.env.EVAL_SEED ?? 2026)
const COUNT = Number(process.env.EVAL_COUNT ?? 64)
const PGLITE = process.env.EVAL_PGLITE === '1'
const CONCURRENCY = 4
const TARGETS = { f1: 0.85, noDeployAccuracy: 0.9, categoryAccuracy: 0.7 }

interface Outcome {
  scenario: Scenario
  predictedDeploy: string | null
  truthDeploy: string | null
  /** The runbook the runbook agent proposed first, and the one that fits the cause. */
  proposedRunbook: string | null
  truthRunbook: string | null
  category: string
  statement: string
  /** Pairs of the scenario's alerts: [truly together, grouped together]. */
  pairs: Array<[boolean, boolean]>
}

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function alertBody(alert: ScenarioAlert): object {
  if (alert.format === 'alertmanager')
    return {
      version: '4',
      status: 'firing',
      receiver: 'incident-platform',
      groupKey: `{}:{alertname="${alert.labels.alertname}"}`,
      commonLabels: { service: alert.service },
      commonAnnotations: {},
      alerts: [
        {
          status: 'firing',
          labels: { ...alert.labels, service: alert.service, severity: alert.priority.toLowerCase() },
          annotations: { summary: alert.title, description: alert.description },
          startsAt: new Date().toISOString(),
          fingerprint: createHmac('sha256', 'fp').update(alert.title).digest('hex').slice(0, 16),
        },
      ],
    }
  if (alert.format === 'datadog')
    return {
      title: alert.title,
      body: alert.description,
      priority: alert.priority,
      alert_transition: 'Triggered',
      aggregate: alert.title,
      tags: Object.entries({ ...alert.labels, service: alert.service })
        .map(([key, value]) => `${key}:${value}`)
        .join(','),
      date: String(Date.now()),
    }
  return {
    title: alert.title,
    description: alert.description,
    service: alert.service,
    priority: alert.priority,
    labels: alert.labels,
    fingerprint: alert.title,
  }
}

async function evaluate(ai: AiConfig, label: string): Promise<Outcome[]> {
  const teardowns: Array<() => unknown> = []
  // EVAL_PGLITE=1: the embedded database, in memory, instead of a PostgreSQL database of its own.
  const database = PGLITE ? { url: undefined, drop: async () => {} } : await createBenchDatabase('eval_insights')
  try {
    const issuer = await startTestIssuer({ teardown: (fn) => teardowns.push(fn) })
    const config = testConfig(issuer, {
      ...(database.url ? { databaseUrl: database.url } : {}),
      logLevel: 'warn',
      ai,
      rateLimit: { max: 1_000_000_000, timeWindow: '1 minute', ingestPerConfig: 1_000_000_000 },
    })
    const resources = await openResources(config, { inMemory: PGLITE })
    teardowns.push(() => resources.close())
    const product = await buildApp(config, resources)
    teardowns.push(() => product.close())
    const origin = await product.listen({ port: 0, host: '127.0.0.1' })
    const db = resources.database.db
    const headers = {
      authorization: `Bearer ${issuer.idp.mintIdToken({ email: 'investigator@eval.example' })}`,
      'content-type': 'application/json',
    }
    const { userId } = (await (await fetch(`${origin}/auth/me`, { headers })).json()) as { userId: string }

    async function call<T>(method: string, path: string, body?: object, extra: Record<string, string> = {}): Promise<T> {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const response = await fetch(`${origin}${path}`, { method, headers: { ...headers, ...extra }, body: payload })
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
      return (await response.json()) as T
    }

    async function run(scenario: Scenario, index: number): Promise<Outcome> {
      const organization = await db
        .insertInto('core.organizations')
        .values({ name: scenario.name, slug: `eval-${label}-${index}` })
        .returning('id')
        .executeTakeFirstOrThrow()
      await db.insertInto('core.organizationMembers').values({ organizationId: organization.id, userId, role: 'owner' }).execute()
      const base = `/api/v1/organizations/${organization.id}`
      const configs = new Map<string, { apiKey: string; ingestPath: string; signingSecret: string }>()
      for (const format of ['alertmanager', 'datadog', 'generic'] as const)
        configs.set(format, await call('POST', `${base}/webhooks`, { name: format, format, signed: true }))
      for (const [service, dependsOn] of scenario.dependencies) await call('POST', `${base}/service-dependencies`, { service, dependsOn })
      const runbookIds = new Map<string, string>()
      for (const { key, ...runbook } of scenario.runbooks)
        runbookIds.set(key, (await call<{ id: string }>('POST', `${base}/runbooks`, runbook)).id)

      const deployIds = new Map<string, string>()
      const sendDeploy = async (deploy: ScenarioDeploy, onset: number) => {
        const generic = configs.get('generic')!
        const body = JSON.stringify({
          service: deploy.service,
          kind: deploy.kind,
          environment: deploy.environment,
          version: deploy.version,
          status: 'success',
          finishedAt: new Date(onset - deploy.minutesBefore * 60_000).toISOString(),
        })
        const recorded = await call<{ id: string }>('POST', `${base}/deploy-events/ingest/${generic.apiKey}`, JSON.parse(body) as object, {
          'x-webhook-signature': sign(generic.signingSecret, body),
        })
        deployIds.set(deploy.key, recorded.id)
      }
      const now = Date.now()
      for (const deploy of scenario.deploys.filter((row) => row.minutesBefore >= 0)) await sendDeploy(deploy, now)

      const alertIds: Array<{ id: string; related: boolean }> = []
      for (const alert of scenario.alerts) {
        const config = configs.get(alert.format)!
        const body = JSON.stringify(alertBody(alert))
        const accepted = await call<{ alertId: string }>('POST', config.ingestPath, JSON.parse(body) as object, {
          'x-webhook-signature': sign(config.signingSecret, body),
        })
        alertIds.push({ id: accepted.alertId, related: alert.related })
        await sleep(150)
      }
      const firstAlert = alertIds[0]!.id
      const onset = (await db.selectFrom('divinux.alerts').select('firstSeenAt').where('id', '=', firstAlert).executeTakeFirstOrThrow())
        .firstSeenAt
      for (const deploy of scenario.deploys.filter((row) => row.minutesBefore < 0)) await sendDeploy(deploy, onset.getTime())

      // Correlation runs in the event dispatcher: wait until every alert it will link is linked.
      let links: Array<{ alertId: string; incidentId: string }> = []
      for (let attempt = 0; attempt < 40; attempt++) {
        const pending = await db
          .selectFrom('divinux.alertEvents')
          .select('id')
          .where('organizationId', '=', organization.id)
          .where('type', '=', 'created')
          .where('dispatchedAt', 'is', null)
          .execute()
        links = await db
          .selectFrom('divinux.incidentAlerts')
          .select(['alertId', 'incidentId'])
          .where('organizationId', '=', organization.id)
          .execute()
        if (pending.length === 0) break
        await sleep(250)
      }
      const incidentOf = new Map(links.map((link) => [link.alertId, link.incidentId]))
      const subject = incidentOf.get(firstAlert) ?? firstAlert
      const requested = await call<{ id: string }>('POST', `${base}/insights`, { sourceProduct: 'alerting', incidentId: subject })
      let insight: {
        status: string
        findings: { suspectDeploys: Array<{ deployId: string }>; probableCause: { category: string; statement: string } } | null
        error: string | null
      }
      for (;;) {
        insight = await call('GET', `${base}/insights/${requested.id}`)
        if (insight.status === 'completed' || insight.status === 'failed') break
        await sleep(200)
      }
      if (!insight.findings) throw new Error(`${scenario.name}: the investigation failed: ${insight.error}`)

      const agents = await call<{ data: Array<{ agent: string; output: { matches?: Array<{ runbookId: string }> } }> }>(
        'GET',
        `${base}/insights/${requested.id}/agents`,
      )
      const runbookAgent = agents.data.find((output) => output.agent === 'runbook')

      const pairs: Outcome['pairs'] = []
      for (let a = 0; a < alertIds.length; a++)
        for (let b = a + 1; b < alertIds.length; b++) {
          const left = alertIds[a]!
          const right = alertIds[b]!
          const grouped = incidentOf.has(left.id) && incidentOf.get(left.id) === incidentOf.get(right.id)
          pairs.push([left.related && right.related, grouped])
        }
      return {
        scenario,
        predictedDeploy: insight.findings.suspectDeploys[0]?.deployId ?? null,
        truthDeploy: scenario.expected.deploy ? deployIds.get(scenario.expected.deploy)! : null,
        proposedRunbook: runbookAgent?.output.matches?.[0]?.runbookId ?? null,
        truthRunbook: scenario.expected.runbook ? runbookIds.get(scenario.expected.runbook)! : null,
        category: insight.findings.probableCause.category,
        statement: insight.findings.probableCause.statement,
        pairs,
      }
    }

    const scenarios = generateScenarios(SEED, COUNT)
    const outcomes: Outcome[] = new Array(scenarios.length)
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < scenarios.length) {
          const index = next++
          outcomes[index] = await run(scenarios[index]!, index)
        }
      }),
    )
    return outcomes
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
    await database.drop()
  }
}

const ratio = (part: number, whole: number) => (whole === 0 ? 1 : part / whole)
const fixed = (value: number) => value.toFixed(3)

function report(label: string, outcomes: Outcome[], targets: boolean): boolean {
  let tp = 0
  let fp = 0
  let fn = 0
  for (const outcome of outcomes) {
    if (outcome.predictedDeploy && outcome.predictedDeploy === outcome.truthDeploy) tp++
    else {
      if (outcome.predictedDeploy) fp++
      if (outcome.truthDeploy) fn++
    }
  }
  const precision = ratio(tp, tp + fp)
  const recall = ratio(tp, tp + fn)
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  const noDeploy = outcomes.filter((outcome) => outcome.truthDeploy === null)
  const noDeployAccuracy = ratio(noDeploy.filter((outcome) => outcome.predictedDeploy === null).length, noDeploy.length)
  const categoryAccuracy = ratio(
    outcomes.filter((outcome) => outcome.category === outcome.scenario.expected.category).length,
    outcomes.length,
  )
  const pairs = outcomes.flatMap((outcome) => outcome.pairs)
  const together = pairs.filter(([truth, grouped]) => truth && grouped).length
  const groupPrecision = ratio(together, pairs.filter(([, grouped]) => grouped).length)
  const groupRecall = ratio(together, pairs.filter(([truth]) => truth).length)
  const groupF1 = groupPrecision + groupRecall === 0 ? 0 : (2 * groupPrecision * groupRecall) / (groupPrecision + groupRecall)

  console.log(`\n${label}: ${outcomes.length} scenarios (seed ${SEED}, ${PGLITE ? 'PGlite' : 'PostgreSQL'})`)
  console.log(
    `  deploy attribution  precision ${fixed(precision)}  recall ${fixed(recall)}  F1 ${fixed(f1)}  (tp ${tp}, fp ${fp}, fn ${fn})`,
  )
  console.log(`  no-deploy accuracy  ${fixed(noDeployAccuracy)} over ${noDeploy.length}`)
  console.log(`  category accuracy   ${fixed(categoryAccuracy)}`)
  console.log(
    `  grouping            precision ${fixed(groupPrecision)}  recall ${fixed(groupRecall)}  F1 ${fixed(groupF1)} over ${pairs.length} pairs`,
  )
  const proposed = outcomes.filter((outcome) => outcome.proposedRunbook !== null)
  const rightRunbook = proposed.filter((outcome) => outcome.proposedRunbook === outcome.truthRunbook).length
  const withRunbook = outcomes.filter((outcome) => outcome.truthRunbook !== null).length
  console.log(
    `  runbook matching    precision ${fixed(ratio(rightRunbook, proposed.length))}  recall ${fixed(ratio(rightRunbook, withRunbook))}  (first match right in ${rightRunbook} of ${proposed.length} proposed; ${withRunbook} have a fitting runbook)`,
  )
  const kinds = [...new Set(outcomes.map((outcome) => outcome.scenario.kind))]
  for (const kind of kinds) {
    const of = outcomes.filter((outcome) => outcome.scenario.kind === kind)
    const right = of.filter(
      (outcome) => outcome.category === outcome.scenario.expected.category && outcome.predictedDeploy === outcome.truthDeploy,
    ).length
    console.log(`    ${kind.padEnd(18)} ${right}/${of.length} fully right`)
  }
  for (const outcome of outcomes) {
    const deployRight = outcome.predictedDeploy === outcome.truthDeploy
    if (deployRight && outcome.category === outcome.scenario.expected.category && !process.env.EVAL_VERBOSE) continue
    console.log(
      `    miss ${outcome.scenario.name} [decoys ${outcome.scenario.decoys.join(', ')}]: ${outcome.category} (expected ${outcome.scenario.expected.category})${deployRight ? '' : `, deploy ${outcome.predictedDeploy ? 'named wrongly' : 'missed'}`}: ${outcome.statement.slice(0, 160)}`,
    )
  }
  if (!targets) return true
  const met = f1 >= TARGETS.f1 && noDeployAccuracy >= TARGETS.noDeployAccuracy && categoryAccuracy >= TARGETS.categoryAccuracy
  console.log(
    `  targets (F1 ≥ ${TARGETS.f1}, no-deploy ≥ ${TARGETS.noDeployAccuracy}, category ≥ ${TARGETS.categoryAccuracy}): ${met ? 'met' : 'NOT met'}`,
  )
  return met
}

const offline = await evaluate(DEFAULT_AI_CONFIG, 'offline')
const ok = report('offline planner', offline, true)
if (process.env.OPENAI_API_KEY) {
  const ai: AiConfig = {
    ...DEFAULT_AI_CONFIG,
    openai: {
      apiKey: process.env.OPENAI_API_KEY,
      baseUrl: process.env.OPENAI_BASE_URL,
      model: process.env.AI_MODEL ?? 'gpt-4o-mini',
      timeoutMs: 60_000,
    },
    defaultMonthlyLimits: { tokens: 100_000_000, costUsd: 1_000 },
  }
  report(`model ${ai.openai!.model}`, await evaluate(ai, 'model'), false)
} else console.log('\nmodel: not run (set OPENAI_API_KEY, and OPENAI_BASE_URL for another OpenAI-compatible server)')
process.exit(ok ? 0 : 1)
