import t from 'tap'
import { assertLinearTime } from '@svc/testkit/linear-time'
import { draftComms } from '../src/agents/comms-agent.js'
import { oncallBrief } from '../src/agents/oncall-agent.js'
import { matchRunbooks, stepsOf } from '../src/agents/runbook-agent.js'
import type { Findings } from '../src/investigation/findings.js'
import type { Subject } from '../src/investigation/subject.js'

const onset = new Date('2026-11-27T09:30:00Z')
const subject = (fields: Partial<Subject> = {}): Subject => ({
  kind: 'incident',
  id: 'incident-1',
  reference: 'INC-7',
  title: 'Search latency above SLO',
  description: null,
  priority: 'P2',
  status: 'triage',
  onset,
  occurrences: 1,
  services: ['search', 'web'],
  environments: [],
  alerts: [
    {
      id: 'alert-1',
      title: 'Search latency above SLO',
      description: null,
      service: 'search',
      priority: 'P2',
      status: 'triggered',
      source: 'alertmanager',
      labels: { cluster: 'eu-1' },
      firstSeenAt: onset,
      onset,
      occurrences: 1,
    },
  ],
  ...fields,
})
const findings = (cause: Partial<Findings['probableCause']> = {}): Findings => ({
  summary: 's',
  suspectDeploys: [],
  probableCause: { category: 'unknown', confidence: 0.2, statement: 'x', service: null, ...cause },
  evidence: [],
  recommendations: [],
  severity: 'high',
})

t.test('a runbook’s steps are its list items, whatever their marker', async (t) => {
  t.same(stepsOf('# Title\n\n- one\n* two\n+ three\n4) four\n10. ten\n- [x] done\nplain text'), [
    'one',
    'two',
    'three',
    'four',
    'ten',
    'done',
  ])
  t.same(stepsOf('no steps here'), [])
  t.same(stepsOf('- step one\r\n-   [ ]   spaced   \r\n'), ['step one', 'spaced'], 'CRLF lines and spaces around the text')
})

t.test('a crafted runbook is read in linear time', async (t) => {
  // A marker, then a long run of spaces ending in a character '.' does not match: the pattern this
  // replaced tried every split of the run between two quantifiers (10.7 s for two runbooks).
  const size = 20_000
  const benign = `- ${'word '.repeat(size / 5)}`
  assertLinearTime(t, stepsOf, { crafted: `- ${' '.repeat(size)}\u2028`, benign }, 'spaces after a marker')
  assertLinearTime(t, stepsOf, { crafted: `- [ ]${' '.repeat(size)}\u2028`, benign }, 'spaces after a checkbox')
})

t.test('runbooks fit by the cause’s service, a failing service, labels and title words; weak fits are left out', async (t) => {
  const runbooks = [
    { id: 'web', title: 'Web frontend', body: '- restart', services: ['web'], labels: {}, version: 1 },
    { id: 'cluster', title: 'Cluster eu-1', body: '', services: [], labels: { cluster: 'eu-1' }, version: 3 },
    { id: 'words', title: 'Latency playbook for search', body: '', services: [], labels: {}, version: 1 },
    { id: 'other-labels', title: 'Other', body: '', services: [], labels: { cluster: 'us-1' }, version: 1 },
  ]
  const matches = matchRunbooks(subject(), findings(), runbooks)
  t.same(
    matches.map((match) => [match.runbookId, match.score]),
    [
      ['web', 0.8],
      ['cluster', 0.6],
    ],
    'title words alone (0.2) are not enough',
  )
  t.match(matches[0]!.why, ['it is for web, which is failing'])
  t.match(matches[1], { version: 3, why: ['its labels cluster=eu-1 match the alert "Search latency above SLO"'] })
  const both = matchRunbooks(subject(), findings(), [{ ...runbooks[1]!, id: 'both', services: ['search', 'web'] }])
  t.match(both[0], { score: 1.4, why: [/search, web, which are failing/, /labels/] })
})

t.test('the comms draft follows the incident’s state in plain words', async (t) => {
  const components = { components: [{ id: 'c1', name: 'Search', status: 'degraded_performance', changes: [] }] }
  const unknown = draftComms(subject(), findings(), {})
  t.match(unknown.statusPageUpdate, {
    name: 'Problems affecting some of our services',
    status: 'investigating',
    body: /^We are investigating problems affecting some of our services\./,
  })
  t.match(unknown.stakeholderSummary, /Cause: not established yet/)
  const capacity = draftComms(subject(), findings({ category: 'capacity', confidence: 0.7 }), components)
  t.match(capacity.statusPageUpdate, {
    status: 'identified',
    body: 'We have identified the cause of the problems affecting Search: our systems running short of capacity. We are adding capacity.',
  })
  t.match(capacity.stakeholderSummary, /Likely cause: our systems running short of capacity \(confidence 70 %\)/)
  const unsure = draftComms(subject(), findings({ category: 'external', confidence: 0.5 }), components)
  t.equal(unsure.statusPageUpdate.status, 'investigating', 'not "identified" below the confidence bar')
  t.match(draftComms(subject({ status: 'monitoring' }), findings(), components).statusPageUpdate, {
    status: 'monitoring',
    body: 'A fix has been applied and we are monitoring Search.',
  })
  t.match(draftComms(subject({ status: 'resolved' }), findings(), components).statusPageUpdate, {
    status: 'resolved',
    body: /Search is working normally again/,
  })
  const two = { components: [...components.components, { id: 'c2', name: 'Web', status: 'operational', changes: [] }] }
  t.match(draftComms(subject({ status: 'resolved' }), findings(), two).statusPageUpdate.body, /Search and Web are working normally again/)
  t.equal(draftComms(subject({ status: 'weird' }), findings(), {}).statusPageUpdate.status, 'investigating')
})

t.test('an opening comms draft takes the words of the status page template naming most of the affected components', async (t) => {
  const gathered = {
    components: [
      { id: 'c1', name: 'Search', status: 'degraded_performance', changes: [] },
      { id: 'c2', name: 'Web', status: 'operational', changes: [] },
    ],
  }
  const templates = [
    { key: 'web-slow', title: 'Pages load slowly', body: 'Pages take longer to load.', componentIds: ['c2', 'c9'] },
    { key: 'search-and-web', title: 'Search and pages degraded', body: 'Searching and browsing are slow.', componentIds: ['c1', 'c2'] },
    { key: 'billing', title: 'Billing delayed', body: 'Invoices are late.', componentIds: ['c7'] },
  ]
  t.same(draftComms(subject(), findings(), gathered, templates).statusPageUpdate, {
    name: 'Search and pages degraded',
    status: 'investigating',
    body: 'Searching and browsing are slow.',
    template: 'search-and-web',
  })
  t.equal(
    draftComms(subject(), findings({ category: 'capacity', confidence: 0.7 }), gathered, templates).statusPageUpdate.template,
    'search-and-web',
    'identified: still an opening update',
  )
  const monitoring = draftComms(subject({ status: 'monitoring' }), findings(), gathered, templates).statusPageUpdate
  t.equal(monitoring.template, undefined, 'a later update keeps the agent’s words')
  t.match(monitoring.body, /monitoring Search and Web/)
  t.equal(
    draftComms(subject(), findings(), gathered, [templates[2]!]).statusPageUpdate.template,
    undefined,
    'no template for these components',
  )
})

t.test('the on-call brief: what is failing, then the suspect or the likely cause and the runbook', async (t) => {
  const policies = [
    { service: 'search', policyId: 'p-search', policyName: 'Search team' },
    { service: 'index', policyId: 'p-index', policyName: 'Index team' },
  ]
  const none = oncallBrief(subject({ services: [] }), findings(), {}, [], policies)
  t.same(none.lines, ['P2 an unknown service failing since 09:30 UTC: Search latency above SLO', 'No suspect change · no runbook matched'])
  t.same(none.suggestions, [])
  const dependency = oncallBrief(
    subject(),
    findings({ category: 'dependency', confidence: 0.7, service: 'index' }),
    {},
    [{ runbookId: 'r', version: 1, title: 'Index', score: 1, why: [], steps: [] }],
    policies,
  )
  t.equal(dependency.lines[1], 'Likely dependency (index), no suspect change · runbook "Index"')
  t.match(dependency.suggestions, [{ policyId: 'p-index', why: 'the probable cause lies in index, whose alerts page "Index team"' }])
  const own = oncallBrief(subject(), findings({ category: 'capacity', confidence: 0.6, service: 'search' }), {}, [], policies)
  t.equal(own.lines[1], 'Likely capacity (search), no suspect change · no runbook matched')
  t.same(own.suggestions, [], 'the policy already paging for the incident is not suggested again')
  const external = oncallBrief(subject(), findings({ category: 'external', confidence: 0.6 }), {}, [], policies)
  t.equal(external.lines[1], 'Likely external, no suspect change · no runbook matched')
})
