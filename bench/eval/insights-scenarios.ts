// The evaluation set of `pnpm eval:insights` (issue 30): synthetic incidents with a known cause,
// generated from a seed so every run replays the same set. Each scenario is what an organization
// would really see: alerts in the formats real senders use (Alertmanager, Datadog, generic JSON)
// with their labels, several services with a dependency map, deploys from a pipeline, and decoys
// that a "blame the latest deploy" rule gets wrong: a deploy of another service just before, a
// deploy of the same service just after the onset, an older deploy replaced by a newer one, a
// staging deploy. Vocabularies are broad on purpose: the set must not be tuned to one heuristic.

export type Category = 'deploy' | 'dependency' | 'capacity' | 'configuration' | 'external' | 'unknown'
export type Format = 'alertmanager' | 'datadog' | 'generic'

export interface ScenarioDeploy {
  key: string
  service: string
  kind: 'deploy' | 'config' | 'rollback'
  environment: string
  version: string | null
  /** Minutes before the onset it finished; negative: after the onset (sent once the alerts are in). */
  minutesBefore: number
}

export interface ScenarioAlert {
  format: Format
  title: string
  service: string
  priority: 'P1' | 'P2' | 'P3' | 'P4'
  labels: Record<string, string>
  description: string
  /** Part of the incident (false: unrelated noise that must stay out of it). */
  related: boolean
}

export interface Scenario {
  name: string
  kind:
    | 'deploy_regression'
    | 'slow_regression'
    | 'dependency_deploy'
    | 'dependency_outage'
    | 'coincident_deploy'
    | 'capacity'
    | 'configuration'
    | 'external'
    | 'noise'
  dependencies: Array<[service: string, dependsOn: string]>
  deploys: ScenarioDeploy[]
  alerts: ScenarioAlert[]
  /** Runbooks the organization keeps: one for the service the cause lies in (when there is one), decoys for others. */
  runbooks: Array<{ key: string; title: string; services: string[]; body: string }>
  expected: { category: Category; deploy: string | null; runbook: string | null }
  decoys: string[]
}

/** A small linear congruential generator: the same seed, the same set. */
function random(seed: number) {
  let state = seed >>> 0
  const next = () => (state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32
  return {
    next,
    int: (from: number, to: number) => from + Math.floor(next() * (to - from + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  }
}

const SYSTEMS = [
  { front: 'web', api: 'checkout', store: 'orders-db' },
  { front: 'mobile-bff', api: 'payments', store: 'ledger-db' },
  { front: 'storefront', api: 'catalog', store: 'search-index' },
  { front: 'portal', api: 'accounts', store: 'identity-db' },
  { front: 'dashboard', api: 'reports', store: 'warehouse' },
  { front: 'gateway', api: 'shipping', store: 'redis-cache' },
]
const BYSTANDERS = ['notifications', 'recommendations', 'feature-store', 'admin', 'billing-jobs', 'email-worker']

const ERROR_TITLES = [
  (service: string) => `${service} 5xx rate above 5%`,
  (service: string) => `High error ratio on ${service}`,
  (service: string) => `${service} p99 latency above SLO`,
  (service: string) => `${service}: elevated HTTP 500 responses`,
  (service: string) => `Requests failing on ${service}`,
]
const OUTAGE_TITLES = [
  (service: string) => `${service} is down`,
  (service: string) => `${service} primary unreachable`,
  (service: string) => `${service} health check failing`,
  (service: string) => `No healthy hosts for ${service}`,
]
const CAPACITY_TITLES = [
  (service: string) => `${service} CPU usage above 95%`,
  (service: string) => `${service} pods OOMKilled`,
  (service: string) => `Disk full on ${service} volume`,
  (service: string) => `${service} connection pool exhausted`,
  (service: string) => `${service} queue depth growing`,
  (service: string) => `${service} memory saturation`,
  (service: string) => `${service} throttled by its CPU quota`,
]
const EXTERNAL_TITLES = [
  (service: string) => `${service}: Stripe API returning 503`,
  (service: string) => `${service} SMS delivery failing at Twilio`,
  (service: string) => `DNS resolution failures from ${service}`,
  (service: string) => `${service} TLS handshake errors to partner API`,
  (service: string) => `${service} CDN origin errors at Cloudflare`,
  (service: string) => `${service} S3 PutObject errors rising`,
]
const NOISE_TITLES = [
  (service: string) => `${service} nightly batch finished late`,
  (service: string) => `${service} synthetic login flaky`,
  (service: string) => `${service} cron heartbeat missed once`,
  (service: string) => `${service} log volume unusual`,
  (service: string) => `Stale metrics from ${service} exporter`,
]

let versionCounter = 100
const version = () => `v1.${(versionCounter += 1)}.0`

function alertOf(
  rng: ReturnType<typeof random>,
  title: string,
  service: string,
  priority: ScenarioAlert['priority'],
  related = true,
): ScenarioAlert {
  const format = rng.pick(['alertmanager', 'alertmanager', 'datadog', 'generic'] as const)
  const region = rng.pick(['eu-west-1', 'us-east-1', 'ap-southeast-2'])
  const labels: Record<string, string> =
    format === 'alertmanager'
      ? {
          alertname: title.replace(/[^A-Za-z0-9]+/g, ''),
          namespace: 'prod',
          cluster: `k8s-${region}`,
          pod: `${service}-${rng.int(1000, 9999)}`,
        }
      : format === 'datadog'
        ? { env: 'prod', region, team: rng.pick(['core', 'growth', 'platform']) }
        : { env: 'production', region }
  return { format, title, service, priority, labels, description: `${title}. Runbook: https://wiki.example/runbooks/${service}`, related }
}

function noiseAlert(rng: ReturnType<typeof random>, used: Set<string>): ScenarioAlert {
  const service = rng.pick(BYSTANDERS.filter((name) => !used.has(name)))
  return alertOf(rng, rng.pick(NOISE_TITLES)(service), service, 'P4', false)
}

/** Deploys that point nowhere: of bystanders, or too old. */
function backgroundDeploys(rng: ReturnType<typeof random>, count: number): ScenarioDeploy[] {
  return Array.from({ length: count }, (_, index) => ({
    key: `background-${index}`,
    service: rng.pick(BYSTANDERS),
    kind: 'deploy' as const,
    environment: 'production',
    version: version(),
    minutesBefore: rng.int(20, 230),
  }))
}

type Decoy = 'other_service_before' | 'same_service_after' | 'older_replaced' | 'staging'

function decoyDeploys(rng: ReturnType<typeof random>, decoys: Decoy[], culprit: ScenarioDeploy, other: string): ScenarioDeploy[] {
  return decoys.map((decoy) => {
    switch (decoy) {
      case 'other_service_before':
        return {
          key: decoy,
          service: other,
          kind: 'deploy',
          environment: 'production',
          version: version(),
          minutesBefore: Math.max(1, culprit.minutesBefore - rng.int(1, 3)),
        }
      case 'same_service_after':
        return {
          key: decoy,
          service: culprit.service,
          kind: 'deploy',
          environment: 'production',
          version: version(),
          minutesBefore: -rng.int(1, 3),
        }
      case 'older_replaced':
        return {
          key: decoy,
          service: culprit.service,
          kind: 'deploy',
          environment: 'production',
          version: version(),
          minutesBefore: culprit.minutesBefore + rng.int(30, 150),
        }
      case 'staging':
        return {
          key: decoy,
          service: culprit.service,
          kind: 'deploy',
          environment: 'staging',
          version: version(),
          minutesBefore: rng.int(1, 4),
        }
    }
  })
}

const ALL_DECOYS: Decoy[] = ['other_service_before', 'same_service_after', 'older_replaced', 'staging']

function someDecoys(rng: ReturnType<typeof random>): Decoy[] {
  const chosen = ALL_DECOYS.filter(() => rng.chance(0.5))
  return chosen.length > 0 ? chosen : [rng.pick(ALL_DECOYS)]
}

/** The evaluation set: `count` scenarios (at least 60), the same for the same seed. */
export function generateScenarios(seed = 2026, count = 64): Scenario[] {
  const rng = random(seed)
  versionCounter = 100
  const plan: Scenario['kind'][] = []
  const mix: Array<[Scenario['kind'], number]> = [
    ['deploy_regression', 0.25],
    ['slow_regression', 0.06],
    ['dependency_deploy', 0.09],
    ['dependency_outage', 0.12],
    ['coincident_deploy', 0.06],
    ['capacity', 0.14],
    ['configuration', 0.11],
    ['external', 0.08],
    ['noise', 0.09],
  ]
  for (const [kind, share] of mix) for (let index = 0; index < Math.round(share * count); index++) plan.push(kind)
  while (plan.length < count) plan.push('deploy_regression')

  return plan.slice(0, count).map((kind, index) => withRunbooks(scenarioOf(kind, index)))

  function scenarioOf(
    kind: Scenario['kind'],
    index: number,
  ): Omit<Scenario, 'runbooks' | 'expected'> & { expected: Omit<Scenario['expected'], 'runbook'> } {
    const system = rng.pick(SYSTEMS)
    const dependencies: Scenario['dependencies'] = [
      [system.front, system.api],
      [system.api, system.store],
    ]
    const used = new Set([system.front, system.api, system.store])
    const other = rng.pick(BYSTANDERS)
    const name = `${String(index + 1).padStart(2, '0')}-${kind}`
    const noise = rng.chance(0.6) ? [noiseAlert(rng, used)] : []
    const background = backgroundDeploys(rng, rng.int(0, 2))

    if (kind === 'deploy_regression' || kind === 'slow_regression' || kind === 'dependency_deploy') {
      const broken = kind === 'dependency_deploy' ? system.store : rng.pick([system.api, system.front])
      // A slow regression (a leak, a cache that drains) shows an hour or more after its deploy.
      const culprit: ScenarioDeploy = {
        key: 'culprit',
        service: broken,
        kind: 'deploy',
        environment: 'production',
        version: version(),
        minutesBefore: kind === 'slow_regression' ? rng.int(45, 100) : rng.int(2, 40),
      }
      const decoys = someDecoys(rng)
      const symptom = kind === 'dependency_deploy' ? system.api : broken
      const titles = kind === 'slow_regression' ? CAPACITY_TITLES : ERROR_TITLES
      const alerts = [alertOf(rng, rng.pick(titles)(symptom), symptom, rng.pick(['P1', 'P2'] as const))]
      if (kind === 'dependency_deploy' || rng.chance(0.4))
        alerts.push(alertOf(rng, rng.pick(ERROR_TITLES)(system.front), system.front, 'P3'))
      return {
        name,
        kind,
        dependencies,
        deploys: [culprit, ...decoyDeploys(rng, decoys, culprit, other), ...background],
        alerts: [...alerts, ...noise],
        expected: { category: 'deploy', deploy: 'culprit' },
        decoys,
      }
    }
    if (kind === 'dependency_outage' || kind === 'coincident_deploy') {
      const alerts = [
        alertOf(rng, rng.pick(OUTAGE_TITLES)(system.store), system.store, 'P1'),
        alertOf(rng, rng.pick(ERROR_TITLES)(system.api), system.api, 'P2'),
        ...(rng.chance(0.5) ? [alertOf(rng, rng.pick(ERROR_TITLES)(system.front), system.front, 'P3')] : []),
      ]
      // A coincident deploy: a service that fails only because its dependency does had a deploy a while before.
      const coincident = kind === 'coincident_deploy'
      const decoy: ScenarioDeploy = {
        key: coincident ? 'affected_service_before' : 'other_service_before',
        service: coincident ? system.api : other,
        kind: 'deploy',
        environment: 'production',
        version: version(),
        minutesBefore: coincident ? rng.int(15, 40) : rng.int(2, 15),
      }
      return {
        name,
        kind,
        dependencies,
        deploys: [decoy, ...background],
        alerts: [...alerts, ...noise],
        expected: { category: 'dependency', deploy: null },
        decoys: [decoy.key],
      }
    }
    if (kind === 'capacity') {
      const service = rng.pick([system.api, system.store])
      const oldDeploy: ScenarioDeploy = {
        key: 'old_same_service',
        service,
        kind: 'deploy',
        environment: 'production',
        version: version(),
        minutesBefore: rng.int(150, 230),
      }
      const alerts = [alertOf(rng, rng.pick(CAPACITY_TITLES)(service), service, rng.pick(['P1', 'P2'] as const))]
      return {
        name,
        kind,
        dependencies,
        deploys: [oldDeploy, ...background],
        alerts: [...alerts, ...noise],
        expected: { category: 'capacity', deploy: null },
        decoys: ['old_same_service'],
      }
    }
    if (kind === 'configuration') {
      const service = rng.pick([system.api, system.front])
      const change: ScenarioDeploy = {
        key: 'culprit',
        service,
        kind: 'config',
        environment: 'production',
        version: null,
        minutesBefore: rng.int(2, 25),
      }
      const staging: ScenarioDeploy = {
        key: 'staging',
        service,
        kind: 'deploy',
        environment: 'staging',
        version: version(),
        minutesBefore: rng.int(1, 5),
      }
      const alerts = [alertOf(rng, rng.pick(ERROR_TITLES)(service), service, rng.pick(['P1', 'P2'] as const))]
      return {
        name,
        kind,
        dependencies,
        deploys: [change, staging, ...background],
        alerts: [...alerts, ...noise],
        expected: { category: 'configuration', deploy: 'culprit' },
        decoys: ['staging'],
      }
    }
    if (kind === 'external') {
      const service = rng.pick([system.api, system.front])
      const decoy: ScenarioDeploy = {
        key: 'other_service_before',
        service: other,
        kind: 'deploy',
        environment: 'production',
        version: version(),
        minutesBefore: rng.int(1, 10),
      }
      const alerts = [alertOf(rng, rng.pick(EXTERNAL_TITLES)(service), service, rng.pick(['P1', 'P2'] as const))]
      return {
        name,
        kind,
        dependencies,
        deploys: [decoy, ...background],
        alerts: [...alerts, ...noise],
        expected: { category: 'external', deploy: null },
        decoys: ['other_service_before'],
      }
    }
    const service = rng.pick(BYSTANDERS)
    // Half the time the flaky alert's own service was deployed one to two and a half hours before, for no fault of its own.
    const sameService = rng.chance(0.5)
    const decoy: ScenarioDeploy = {
      key: sameService ? 'same_service_long_before' : 'other_service_before',
      service: sameService ? service : other === service ? system.api : other,
      kind: 'deploy',
      environment: 'production',
      version: version(),
      minutesBefore: sameService ? rng.int(60, 150) : rng.int(1, 10),
    }
    return {
      name,
      kind,
      dependencies,
      deploys: [decoy, ...background],
      alerts: [alertOf(rng, rng.pick(NOISE_TITLES)(service), service, 'P2')],
      expected: { category: 'unknown', deploy: null },
      decoys: [decoy.key],
    }
  }
}

const RUNBOOK_BODY = (service: string) => `# ${service}

1. Check ${service}'s dashboards: error rate, latency, saturation.
2. Look at its recent deploys and configuration changes.
3. Page the owning team if it is not already on the incident.
`

/** The runbooks of a scenario's organization: the cause's service, the front service's, a bystander's. */
function withRunbooks(scenario: Omit<Scenario, 'runbooks' | 'expected'> & { expected: Omit<Scenario['expected'], 'runbook'> }): Scenario {
  const front = scenario.dependencies[0]![0]
  const store = scenario.dependencies[1]![1]
  const culprit = scenario.deploys.find((deploy) => deploy.key === 'culprit')
  const first = scenario.alerts[0]!.service
  const cause =
    culprit?.service ??
    (scenario.kind === 'dependency_outage' || scenario.kind === 'coincident_deploy' ? store : scenario.kind === 'noise' ? null : first)
  const alerted = new Set(scenario.alerts.map((alert) => alert.service))
  const bystander = BYSTANDERS.find((service) => !alerted.has(service) && service !== cause)!
  const runbooks: Scenario['runbooks'] = [
    ...(cause ? [{ key: 'cause', title: `${cause} troubleshooting`, services: [cause], body: RUNBOOK_BODY(cause) }] : []),
    ...(front !== cause ? [{ key: 'front', title: `${front} troubleshooting`, services: [front], body: RUNBOOK_BODY(front) }] : []),
    { key: 'bystander', title: `${bystander} troubleshooting`, services: [bystander], body: RUNBOOK_BODY(bystander) },
  ]
  return { ...scenario, runbooks, expected: { ...scenario.expected, runbook: cause ? 'cause' : null } }
}
