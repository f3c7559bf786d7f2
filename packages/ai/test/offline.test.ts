import t from 'tap'
import { createOfflineAnalyzer, type DeployEvidence, type EvidenceSource, type IncidentContext, type SimilarIncident } from '@svc/ai'

const incident = (overrides: Partial<IncidentContext> = {}): IncidentContext => ({
  sourceProduct: 'alerting',
  incidentId: 'incident-1',
  title: 'Checkout errors above 5%',
  description: null,
  service: 'checkout',
  priority: 'P2',
  status: 'open',
  startedAt: new Date('2026-11-23T08:00:00Z'),
  occurrences: 1,
  labels: {},
  ...overrides,
})
const deploy = (id: string, overrides: Partial<DeployEvidence> = {}): DeployEvidence => ({
  id,
  service: 'checkout',
  environment: 'production',
  version: `v-${id}`,
  commitSha: null,
  status: 'success',
  at: '2026-11-23T07:50:00Z',
  minutesBeforeIncident: 10,
  ...overrides,
})
const source = (deploys: DeployEvidence[] = [], similar: SimilarIncident[] = []): EvidenceSource => ({
  recentDeploys: async () => deploys,
  similarIncidents: async () => similar,
  timeline: async () => [],
})
const analyzer = createOfflineAnalyzer()

t.test('severity follows priority, one level up for an incident that keeps recurring', async (t) => {
  const severity = async (priority: string, occurrences = 1) =>
    (await analyzer.analyzeIncident(incident({ priority, occurrences }), source())).severity
  t.same(await Promise.all(['P1', 'P2', 'P3', 'P4', 'P5'].map((priority) => severity(priority))), [
    'critical',
    'high',
    'medium',
    'low',
    'low',
  ])
  t.equal(await severity('P3', 10), 'high')
  t.equal(await severity('P1', 50), 'critical')
})

t.test('the suspect is the latest deploy of the incident’s service, a failed one first', async (t) => {
  const latest = deploy('latest', { minutesBeforeIncident: 5 })
  const older = deploy('older', { minutesBeforeIncident: 40 })
  const otherService = deploy('search', { service: 'search', minutesBeforeIncident: 1 })
  t.equal((await analyzer.analyzeIncident(incident(), source([otherService, older, latest]))).suspectedDeployId, 'latest')
  const failed = deploy('failed', { status: 'failure', minutesBeforeIncident: 30 })
  const result = await analyzer.analyzeIncident(incident(), source([latest, failed]))
  t.equal(result.suspectedDeployId, 'failed')
  t.match(result.rootCause, /deploy v-failed of checkout to production, which failed, finished 30 minutes before/)
  t.match(result.recommendations[0], /revert the change/, 'no commit known')
  t.equal(
    (await analyzer.analyzeIncident(incident(), source([otherService]))).suspectedDeployId,
    null,
    'another service’s deploy is not blamed',
  )
  t.equal(
    (await analyzer.analyzeIncident(incident({ service: null }), source([otherService]))).suspectedDeployId,
    'search',
    'unless the incident names no service',
  )
  t.match(
    (await analyzer.analyzeIncident(incident(), source([deploy('one', { minutesBeforeIncident: 1, version: null, environment: null })])))
      .rootCause,
    /the deploy of checkout finished 1 minute before/,
  )
})

t.test('a similar resolved incident is recalled only when alike enough', async (t) => {
  const alike: SimilarIncident = {
    sourceProduct: 'alerting',
    incidentId: 'past',
    title: 'Checkout errors above 4%',
    similarity: 0.8,
    resolvedAt: null,
    rootCause: null,
  }
  const result = await analyzer.analyzeIncident(incident({ occurrences: 3 }), source([], [alike]))
  t.match(result.rootCause, /^It resembles the resolved incident "Checkout errors above 4%" \(similarity 0\.80\)\.$/)
  t.match(result.summary, /It has occurred 3 times\./)
  t.same(result.usage, { provider: 'offline', model: 'offline', promptTokens: 0, completionTokens: 0 })
  const faint = await analyzer.analyzeIncident(incident({ service: null }), source([], [{ ...alike, similarity: 0.2 }]))
  t.match(faint.rootCause, /^No deploy preceded it/)
  t.match(faint.recommendations[0], /the affected service/)
})

t.test('an RCA draft: incidents in order, durations, causes from the deploy, the analyses and alike incidents', async (t) => {
  const empty = await analyzer.draftRca({ title: 'Nothing yet', incidents: [], deploys: [], similarIncidents: [] })
  t.match(empty, { summary: /^No incidents are linked/, suspectedDeployId: null })

  const later = incident({
    incidentId: 'b',
    title: 'Payments timing out',
    service: 'payments',
    priority: 'P1',
    startedAt: new Date('2026-11-23T08:05:00Z'),
    occurrences: 4,
    status: 'resolved',
  })
  const draft = await analyzer.draftRca({
    title: 'Monday',
    incidents: [
      {
        incident: later,
        timeline: [
          { type: 'created', at: '2026-11-23T08:05:00.000Z', detail: null },
          { type: 'resolved', at: '2026-11-23T08:47:00.000Z', detail: null },
        ],
        analysis: { summary: null, rootCause: 'Pool exhausted.', severity: 'critical' },
      },
      { incident: incident(), timeline: [{ type: 'created', at: '2026-11-23T08:00:00.000Z', detail: null }], analysis: null },
    ],
    deploys: [deploy('d1', { service: 'payments', status: 'error', minutesBeforeIncident: 20, at: '2026-11-23T07:40:00.000Z' })],
    similarIncidents: [
      {
        sourceProduct: 'alerting',
        incidentId: 'old',
        title: 'Payments timing out again',
        similarity: 0.7,
        resolvedAt: null,
        rootCause: 'A slow query.',
      },
    ],
  })
  t.match(
    draft.summary,
    /^2 incidents on checkout, payments: "Checkout errors above 5%" \(P2\), "Payments timing out" \(P1\), beginning at 2026-11-23T08:00:00.000Z\.$/,
  )
  t.equal(
    draft.impact,
    '- Checkout errors above 5% (P2, checkout): still open.\n- Payments timing out (P1, payments): resolved after 42 minutes, 4 occurrences.',
  )
  t.match(
    draft.rootCause,
    /^The deploy v-d1 of payments to production, which failed, finished 20 minutes before the first incident began\. The analysis of "Payments timing out" found: Pool exhausted\. A resolved incident looked alike: "Payments timing out again" \(its root cause: A slow query\.\)\.$/,
  )
  t.equal(draft.suspectedDeployId, 'd1')
  t.equal(draft.timeline.split('\n')[0], '- 2026-11-23T07:40:00.000Z deploy v-d1 of payments to production (error)')
  t.equal(draft.timeline.split('\n').length, 4)
  const unexplained = await analyzer.draftRca({
    title: 'x',
    incidents: [{ incident: incident({ service: null }), timeline: [], analysis: null }],
    deploys: [],
    similarIncidents: [],
  })
  t.match(unexplained, { rootCause: /^No deploy preceded the incidents/, summary: /^One incident: / })
})
