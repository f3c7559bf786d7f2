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
  await t.rejects(
    analyzer.draftRca({ title: 'Nothing yet', incidents: [], deploys: [], similarIncidents: [] }),
    { message: 'an RCA draft is written from at least one incident', retryable: false },
    'nothing is drafted from nothing: no placeholder sections',
  )

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

t.test('an incident of alerting is named by its reference, with who was paged and who acknowledged', async (t) => {
  const at = (minute: number) => new Date(Date.parse('2026-11-23T08:00:00Z') + minute * 60_000).toISOString()
  const paged = { email: 'ada@example.com', channels: ['email', 'sms'], at: at(1) }
  const draft = await analyzer.draftRca({
    title: 'Checkout',
    incidents: [
      {
        incident: incident({ reference: 'INC-7', priority: 'SEV1', status: 'resolved' }),
        timeline: [
          { type: 'paged', at: at(1), detail: 'ada@example.com (email, sms)' },
          { type: 'alert_acknowledged', at: at(4), detail: 'ada@example.com' },
          { type: 'investigating', at: at(4), detail: 'ada@example.com, via link' },
          { type: 'resolved', at: at(30), detail: 'its alerts resolved' },
        ],
        analysis: { summary: null, rootCause: 'The 2.4.0 deploy broke checkout.', severity: 'critical' },
        people: { paged: [paged], acknowledged: [{ email: 'ada@example.com', at: at(4) }] },
      },
    ],
    deploys: [],
    similarIncidents: [],
  })
  t.match(draft.summary, /^One incident on checkout: INC-7 "Checkout errors above 5%" \(SEV1\)/)
  t.equal(
    draft.impact,
    '- INC-7 Checkout errors above 5% (SEV1, checkout): resolved after 30 minutes. Paged: ada@example.com (email, sms). Acknowledged by ada@example.com 4 minutes after it began.',
  )
  t.match(draft.rootCause, 'The analysis of INC-7 "Checkout errors above 5%" found: The 2.4.0 deploy broke checkout.')
  t.match(draft.timeline, `- ${at(1)} INC-7: paged (ada@example.com (email, sms))`)
  t.match(draft.timeline, `- ${at(4)} INC-7: alert acknowledged (ada@example.com)`)
  t.match(draft.timeline, `- ${at(30)} INC-7: resolved`)

  const unanswered = await analyzer.draftRca({
    title: 'Night',
    incidents: [{ incident: incident({ reference: 'INC-8' }), timeline: [], analysis: null, people: { paged: [paged], acknowledged: [] } }],
    deploys: [],
    similarIncidents: [],
  })
  t.match(unanswered.impact, /Paged: ada@example\.com \(email, sms\)\. Nobody acknowledged the page\.$/)
})
