import t from 'tap'
import { createOfflineAnalyzer, type DeployEvidence, type IncidentContext } from '@svc/ai'

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
const analyzer = createOfflineAnalyzer()

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
