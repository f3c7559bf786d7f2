import t from 'tap'
import {
  dependenciesOf,
  scoreDeploys,
  SUSPECT_THRESHOLD,
  victimsOfDependencies,
  type DeployRecord,
} from '../src/investigation/deploy-scoring.js'
import { plannedFindings } from '../src/investigation/planner.js'
import type { Subject, SubjectAlert } from '../src/investigation/subject.js'
import type { Gathered } from '../src/investigation/tools.js'

const onset = new Date('2026-11-27T12:00:00Z')
const before = (minutes: number) => new Date(onset.getTime() - minutes * 60_000)

function deploy(id: string, fields: Partial<DeployRecord> & { minutesBefore: number }): DeployRecord {
  const { minutesBefore, ...rest } = fields
  return {
    id,
    kind: 'deploy',
    service: 'checkout',
    environment: 'production',
    version: `v-${id}`,
    commitSha: null,
    status: 'success',
    deployedAt: before(minutesBefore),
    ...rest,
  }
}

function alert(title: string, service: string | null, fields: Partial<SubjectAlert> = {}): SubjectAlert {
  return {
    id: `alert-${title}`,
    title,
    description: null,
    service,
    priority: 'P2',
    status: 'triggered',
    source: 'generic',
    labels: {},
    firstSeenAt: onset,
    onset: fields.firstSeenAt ?? onset,
    occurrences: 1,
    ...fields,
  }
}

function subject(alerts: SubjectAlert[]): Subject {
  return {
    kind: 'incident',
    id: 'incident-1',
    reference: 'INC-1',
    title: alerts[0]?.title ?? 'Something',
    description: null,
    priority: 'P2',
    status: 'triage',
    onset,
    occurrences: alerts.length,
    services: [...new Set(alerts.map((row) => row.service).filter((service): service is string => service !== null))],
    environments: [],
    alerts,
  }
}

const context = { onset, affected: ['checkout'], dependencies: ['payments'] }

t.test('deploys are scored by time, relation, environment, replacement, outcome and kind', async (t) => {
  const scored = scoreDeploys(
    [
      deploy('recent', { minutesBefore: 10 }),
      deploy('replaced', { minutesBefore: 60, version: 'old' }),
      deploy('after', { minutesBefore: -5 }),
      deploy('staging', { minutesBefore: 5, environment: 'staging', service: 'cart' }),
      deploy('dependency', { minutesBefore: 10, service: 'payments' }),
      deploy('elsewhere', { minutesBefore: 2, service: 'search' }),
      deploy('failed', { minutesBefore: 10, service: 'payments', status: 'failure', environment: null }),
      deploy('rollback', { minutesBefore: 3, service: 'payments', kind: 'rollback' }),
      deploy('flag', { minutesBefore: 20, kind: 'config', service: 'checkout' }),
    ],
    context,
  )
  const byId = new Map(scored.map((row) => [row.id, row]))
  t.equal(scored[0]!.id, 'recent', 'the latest deploy of the failing service is the best suspect')
  t.ok(byId.get('recent')!.score >= SUSPECT_THRESHOLD)
  t.match(byId.get('replaced')!.reasons, [/60 minutes/, /failing/, /replaced by v-recent before the onset/])
  t.ok(byId.get('replaced')!.score < SUSPECT_THRESHOLD)
  t.match(byId.get('after'), { score: 0, reasons: [/after the onset: it cannot have caused it/] })
  t.equal(scored.at(-1)!.id, 'after', 'what landed after the onset comes last')
  t.match(byId.get('staging')!.reasons, [/5 minutes/, /neither failing nor a dependency/, /to staging, not production/])
  t.match(byId.get('dependency'), { relation: 'dependency', reasons: [/10 minutes/, /a failing service depends on payments/] })
  t.ok(byId.get('elsewhere')!.score < SUSPECT_THRESHOLD, 'a deploy of an unrelated service is never a suspect')
  t.match(byId.get('failed')!.reasons, [/10 minutes/, /depends on payments/, /its status is failure/])
  t.match(byId.get('rollback')!.reasons, [/3 minutes/, /depends/, /a rollback returns to a version that ran before/])
  t.match(byId.get('flag')!.reasons, [/20 minutes/, /failing/, /a configuration change/])
  t.equal(
    byId.get('flag')!.reasons.some((reason) => reason.startsWith('replaced')),
    false,
    'a flag does not replace a release',
  )
  t.match(scoreDeploys([deploy('one', { minutesBefore: 1 })], context)[0]!.reasons[0], /^1 minute before/)
})

t.test('alerts that name their environment rule out deploys to any other, production included', async (t) => {
  const deploys = [
    deploy('staging', { minutesBefore: 10, environment: 'staging' }),
    deploy('production', { minutesBefore: 60, environment: 'prod' }),
  ]
  const inStaging = scoreDeploys(deploys, { ...context, environments: ['staging'] })
  t.equal(inStaging[0]!.id, 'staging', 'the staging release is what the staging alerts follow')
  t.ok(inStaging[0]!.score >= SUSPECT_THRESHOLD)
  t.match(inStaging[1]!.reasons, [/60 minutes/, /failing/, /to prod, while the alerts are in staging/])
  t.ok(inStaging[1]!.score < SUSPECT_THRESHOLD)
  const inProduction = scoreDeploys(deploys, { ...context, environments: ['production'] })
  t.equal(inProduction[0]!.id, 'production', '`prod` and `production` are one environment')
  t.match(inProduction[1]!.reasons, [/10 minutes/, /failing/, /to staging, while the alerts are in production/])
})

t.test('dependencies are followed transitively, the failing services left out', async (t) => {
  const edges = [
    { service: 'web', dependsOn: 'api' },
    { service: 'api', dependsOn: 'db' },
    { service: 'db', dependsOn: 'disk' },
    { service: 'disk', dependsOn: 'web' },
  ]
  t.same(dependenciesOf(['web'], edges).sort(), ['api', 'db', 'disk'])
  t.same(dependenciesOf(['web'], edges, 1), ['api'])
})

t.test('a deploy of a service that failed only after its dependency did is a victim, not a suspect', async (t) => {
  const edges = [
    { service: 'web', dependsOn: 'checkout' },
    { service: 'checkout', dependsOn: 'orders-db' },
  ]
  const victims = victimsOfDependencies(
    new Map([
      ['orders-db', before(3)],
      ['checkout', before(1)],
      ['web', before(5)],
    ]),
    edges,
  )
  t.same([...victims], [['checkout', 'orders-db']], 'web failed before what it depends on: not a victim')
  const [scored] = scoreDeploys([deploy('coincident', { minutesBefore: 15 })], { ...context, failedAfterDependency: victims })
  t.ok(scored!.score < SUSPECT_THRESHOLD)
  t.match(scored!.reasons.at(-1), 'orders-db, which it depends on, was failing before it')
})

t.test('a deploy above the threshold decides, with its evidence and what was ruled out', async (t) => {
  const deploys = scoreDeploys(
    [deploy('culprit', { minutesBefore: 8, commitSha: 'abcdef1234567890' }), deploy('old', { minutesBefore: 200 })],
    context,
  )
  const findings = plannedFindings(subject([alert('Checkout 5xx above 5%', 'checkout')]), { deploys, configChanges: [] })
  t.match(findings, {
    suspectDeploys: [{ deployId: 'culprit', service: 'checkout', version: 'v-culprit' }],
    probableCause: { category: 'deploy', service: 'checkout' },
    severity: 'high',
  })
  t.match(findings.probableCause.statement, /deploy v-culprit of checkout \(commit abcdef123456\) to production finished 8 minutes before/)
  t.match(findings.evidence.at(-1), { claim: /^Ruled out: deploy v-old/, resources: [{ type: 'deploy', id: 'old' }] })
  t.match(findings.recommendations[0], /Roll back checkout to the version before v-culprit, or revert commit abcdef123456/)
})

t.test('a configuration change is a configuration cause', async (t) => {
  const configChanges = scoreDeploys([deploy('flag', { minutesBefore: 4, kind: 'config', version: null })], context)
  const findings = plannedFindings(subject([alert('Checkout errors', 'checkout')]), { deploys: [], configChanges })
  t.match(findings.probableCause, { category: 'configuration', statement: /configuration change of checkout to production/ })
  t.match(findings.recommendations[0], /Revert the configuration change to checkout/)
})

t.test('a failing dependency that failed first is the cause, whoever alerted loudest', async (t) => {
  const alerts = [
    alert('Postgres primary unreachable', 'orders-db', { firstSeenAt: before(2) }),
    alert('Orders API 5xx', 'orders'),
    alert('Checkout latency', 'checkout'),
  ]
  const gathered: Gathered = {
    deploys: scoreDeploys([deploy('search', { minutesBefore: 3, service: 'search' })], {
      onset: before(2),
      affected: ['orders'],
      dependencies: [],
    }),
    configChanges: [],
    dependencies: {
      affected: ['orders-db', 'orders', 'checkout'],
      dependsOn: [],
      dependents: [],
      edges: [
        { service: 'orders', dependsOn: 'orders-db' },
        { service: 'checkout', dependsOn: 'orders' },
      ],
    },
  }
  const findings = plannedFindings(subject(alerts), gathered)
  t.match(findings.probableCause, { category: 'dependency', service: 'orders-db', statement: /orders-db is failing .*it failed first/ })
  t.same(findings.suspectDeploys, [], 'the unrelated deploy is not named')
  t.match(findings.probableCause.statement, /No deploy or configuration change .* too old, elsewhere or replaced/)
})

t.test('a dependency the alerts name, or describe without a map, is a dependency cause', async (t) => {
  const named = plannedFindings(subject([alert('Checkout timeouts calling payments', 'checkout')]), {
    dependencies: {
      affected: ['checkout'],
      dependsOn: ['payments'],
      dependents: [],
      edges: [{ service: 'checkout', dependsOn: 'payments' }],
    },
  })
  t.match(named.probableCause, { category: 'dependency', service: 'payments', statement: /point at payments/ })
  const described = plannedFindings(subject([alert('Upstream connection refused', 'checkout')]), {
    dependencies: { affected: ['checkout'], dependsOn: [], dependents: [], edges: [] },
  })
  t.match(described.probableCause, { category: 'dependency', service: null, statement: /does not name it/ })
  const unmapped = plannedFindings(subject([alert('Upstream connection refused', 'checkout')]), {
    dependencies: { affected: ['checkout'], dependsOn: ['ledger'], dependents: ['web'], edges: [] },
  })
  t.match(unmapped.probableCause, { category: 'dependency', service: 'ledger' })
})

t.test('exhausted resources are a capacity cause', async (t) => {
  const findings = plannedFindings(
    subject([alert('Pod OOMKilled, memory above 95%', 'search', { labels: { alertname: 'KubePodCrashLooping' } })]),
    {},
  )
  t.match(findings.probableCause, { category: 'capacity', service: 'search', statement: /oomkilled, memory/ })
  t.match(findings.summary, /^P2 incident INC-1 "Pod OOMKilled, memory above 95%" on search began at/)
})

t.test('checks failing in some regions only, or a provider named, are an external cause', async (t) => {
  const check = (region: string, failures: number) => ({
    checkId: 'check-1',
    name: 'Homepage',
    region,
    runs: 4,
    failures,
    medianMs: 80,
    errors: [],
  })
  const regional = plannedFindings(subject([alert('Homepage check failing', 'web')]), {
    checks: [check('eu-west', 4), check('us-east', 0), check('ap-south', 0)],
  })
  t.match(regional.probableCause, { category: 'external', statement: /fail from eu-west but pass from us-east, ap-south/ })
  t.match(regional.evidence[0]!.resources, [{ type: 'check', id: 'check-1' }])
  const provider = plannedFindings(subject([alert('Stripe API returning 503', 'billing')]), {})
  t.match(provider.probableCause, { category: 'external', statement: /\(stripe\)/ })
})

t.test('nothing recorded: unknown, and no deploy named', async (t) => {
  const lonely = { ...subject([alert('Nightly report late', 'reports')]), occurrences: 12, priority: 'P4' }
  const findings = plannedFindings(lonely, { deploys: [], configChanges: [] })
  t.match(findings, { suspectDeploys: [], probableCause: { category: 'unknown', confidence: 0.2 }, severity: 'medium' })
  t.match(findings.probableCause.statement, /none was recorded in the hours before/)
  t.match(findings.summary, /It has occurred 12 times\./)
})

t.test('a resolved incident alike lends its cause and its open action items', async (t) => {
  const precedent = {
    kind: 'incident' as const,
    id: 'past',
    title: 'Nightly report late',
    similarity: 0.8,
    resolvedAt: null,
    rootCause: 'The warehouse was saturated.',
    category: 'capacity',
    rcas: [
      {
        id: 'rca-1',
        title: 'Reports',
        rootCause: null,
        actionItems: [
          { title: 'Add a replica', status: 'open' },
          { title: 'Alert earlier', status: 'done' },
        ],
      },
    ],
  }
  const findings = plannedFindings(subject([alert('Nightly report late', 'reports')]), { similar: [precedent] })
  t.match(findings.probableCause, {
    category: 'capacity',
    confidence: 0.35,
    statement: /had a capacity cause.*Its root cause then: The warehouse was saturated\./,
  })
  t.match(findings.evidence, [
    {
      resources: [
        { type: 'incident', id: 'past' },
        { type: 'rca', id: 'rca-1' },
      ],
    },
  ])
  t.ok(findings.recommendations.includes('An action item of its RCA is still open: Add a replica.'))
  t.notOk(findings.recommendations.some((item) => item.includes('Alert earlier')))

  const boosted = plannedFindings(subject([alert('Disk full on reports', 'reports')]), { similar: [precedent] })
  t.ok(boosted.probableCause.confidence > 0.5, 'the same category as the precedent is more certain')
})
