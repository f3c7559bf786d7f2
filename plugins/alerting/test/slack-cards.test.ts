import t from 'tap'
import { alertControls, incidentCard, subjectOf, timelineLine } from '../src/chat/slack/cards.js'
import { slackMessage } from '../src/destinations/chat-integrations/messages.js'
import { channelNameOf } from '../src/chat/slack/incident-sync.js'
import { slackSignatureProblem } from '../src/chat/slack/signature.js'

// What Slack shows of pages and incidents (decision 0020), and how its requests are verified.

const actionsOf = (blocks: object[]) =>
  (blocks as Array<{ type: string; elements?: Array<{ action_id: string; value: string }> }>)
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements ?? [])

t.test('a page offers what still applies to its alert', async (t) => {
  const alertId = '0b0e6a8e-3c43-4a5e-9f5e-3a3c3c6b9d10'
  const open = alertControls({ alertId, status: 'open', acknowledgedBy: null, inIncident: true })
  t.same(
    actionsOf(open).map((button) => button.action_id),
    ['acknowledge', 'resolve', 'escalate', 'join'],
  )
  t.ok(actionsOf(open).every((button) => button.value === `alert:${alertId}`))
  const acknowledged = alertControls({ alertId, status: 'acknowledged', acknowledgedBy: 'ada@example.com', inIncident: false })
  t.match(JSON.stringify(acknowledged), /Acknowledged by ada@example\.com/)
  t.same(
    actionsOf(acknowledged).map((button) => button.action_id),
    ['resolve'],
  )
  const resolved = alertControls({ alertId, status: 'resolved', acknowledgedBy: null, inIncident: false })
  t.match(JSON.stringify(resolved), /Resolved/)
  t.same(actionsOf(resolved), [], 'no buttons left, and no empty actions block')
})

t.test('an incident card shows its people and state; a resolved one has no buttons', async (t) => {
  const state = {
    id: '0b0e6a8e-3c43-4a5e-9f5e-3a3c3c6b9d11',
    reference: 'INC-7',
    title: 'Checkout down',
    severity: 'SEV1',
    status: 'triage',
    commander: null,
    responders: [],
    alertCount: 3,
    url: 'https://product.example/x',
  }
  const triage = incidentCard(state)
  t.equal(triage.text, '[SEV1] INC-7: Checkout down (triage)')
  t.match(JSON.stringify(triage.blocks), /Commander:\* nobody.*Responders:\* none yet/)
  t.same(
    actionsOf(triage.blocks).map((button) => button.action_id),
    ['acknowledge', 'resolve', 'escalate', 'join'],
  )
  const worked = incidentCard({
    ...state,
    status: 'identified',
    commander: 'ada@example.com',
    responders: ['bo@example.com'],
    channelName: 'inc-7',
  })
  t.match(JSON.stringify(worked.blocks), /Worked in #inc-7/)
  t.same(
    actionsOf(worked.blocks).map((button) => button.action_id),
    ['resolve', 'escalate', 'join'],
  )
  t.same(actionsOf(incidentCard({ ...state, status: 'resolved' }).blocks), [])
})

t.test('timeline lines say what changed and who changed it', async (t) => {
  const line = (kind: string, data: object = {}, body: string | null = null, author: string | null = 'ada@example.com') =>
    timelineLine({ kind, data, body, author })
  t.equal(line('note', {}, 'Looking at the pool'), ':memo: Note (ada@example.com): Looking at the pool')
  t.equal(
    line('status_changed', { from: 'triage', to: 'investigating' }),
    ':arrows_counterclockwise: Status triage → investigating (ada@example.com)',
  )
  t.equal(line('severity_changed', { from: 'SEV2', to: 'SEV1' }), ':rotating_light: Severity SEV2 → SEV1 (ada@example.com)')
  t.equal(line('responder_joined'), ':wave: ada@example.com joined as a responder')
  t.equal(line('responder_joined', {}, null, null), ':wave: Someone joined as a responder')
  t.equal(line('role_assigned', { role: 'scribe' }), ':bust_in_silhouette: Role scribe assigned (ada@example.com)')
  t.equal(line('alerts_linked', {}, null, null), '• alerts linked')
})

t.test('text from people and ingested events reaches Slack escaped: no mentions, no hidden links', async (t) => {
  const hostile = 'Disk full <!here> <!channel> <https://evil.example|docs> & <@U123>'
  const escaped = 'Disk full &lt;!here&gt; &lt;!channel&gt; &lt;https://evil.example|docs&gt; &amp; &lt;@U123&gt;'
  const texts = (value: unknown): string[] => JSON.stringify(value).match(/"text":"(?:[^"\\]|\\.)*"/g) ?? []
  const noRawMarkup = (value: unknown, what: string) => {
    for (const text of texts(value)) t.notMatch(text, /<!|<@|<https:\/\/evil/, `${what}: ${text}`)
  }

  const page = slackMessage({
    priority: 'P1',
    title: hostile,
    service: '<!subteam^S1>',
    source: 'generic',
    status: 'open',
    alertUrl: 'https://app.example/alerts/1',
    analysis: { summary: hostile, rootCause: hostile },
    reason: 'Escalation policy <!everyone>, step 1',
  })
  noRawMarkup(page, 'page')
  t.match(page.text, escaped, 'the notification text too')
  t.match(JSON.stringify(page.blocks[0]), '*<https://app.example/alerts/1|[P1] Disk full &lt;!here&gt;', 'our own link stays a link')

  const card = incidentCard({
    id: '0b0e6a8e-3c43-4a5e-9f5e-3a3c3c6b9d10',
    reference: 'INC-1',
    title: hostile,
    severity: 'SEV1',
    status: 'triage',
    commander: '<!here>',
    responders: ['<!channel>'],
    alertCount: 1,
    url: 'https://app.example/incidents/1',
    lastChange: hostile,
  })
  noRawMarkup(card, 'incident card')
  t.match(card.text, escaped)
  noRawMarkup([timelineLine({ kind: 'note', body: hostile, data: {}, author: '<!here>' })], 'timeline')
  t.equal(timelineLine({ kind: 'note', body: 'a < b && c > d', data: {}, author: null }), ':memo: Note: a &lt; b &amp;&amp; c &gt; d')
  noRawMarkup(alertControls({ alertId: 'x', status: 'acknowledged', acknowledgedBy: '<!here>', inIncident: false }), 'acknowledged by')
})

t.test('a button names what it acts on; anything else is nothing', async (t) => {
  t.same(subjectOf('incident:0b0e6a8e-3c43-4a5e-9f5e-3a3c3c6b9d11'), { kind: 'incident', id: '0b0e6a8e-3c43-4a5e-9f5e-3a3c3c6b9d11' })
  t.equal(subjectOf('incident:nope'), undefined)
  t.equal(subjectOf('team:0b0e6a8e-3c43-4a5e-9f5e-3a3c3c6b9d11'), undefined)
})

t.test('channel names are Slack’s: lower-case, dashes, at most 80', async (t) => {
  t.equal(channelNameOf(12, 'Checkout: 500s on /pay!'), 'inc-12-checkout-500s-on-pay')
  t.equal(channelNameOf(3, '¡¡!!'), 'inc-3')
  t.ok(channelNameOf(4, 'x'.repeat(200)).length <= 80)
})

t.test('Slack’s v0 signature, within five minutes, compared whole', async (t) => {
  const { createHmac } = await import('node:crypto')
  const secret = 'a1b2c3d4e5f6a7b8c9d0'
  const body = 'command=%2Fincident&text=help'
  const sign = (timestamp: number) => `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`
  const now = 1_800_000_000
  const headers = (timestamp: number | string, signature: string) => ({
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': signature,
  })
  t.equal(slackSignatureProblem(secret, headers(now, sign(now)), body, now), undefined)
  t.match(slackSignatureProblem(secret, headers(now - 301, sign(now - 301)), body, now), /five minutes/)
  t.match(slackSignatureProblem(secret, headers('soon', sign(now)), body, now), /five minutes/)
  t.match(slackSignatureProblem(secret, headers(now, sign(now).slice(0, -1)), body, now), /does not match/)
  t.match(slackSignatureProblem(secret, headers(now, sign(now)), `${body}&x=1`, now), /does not match/)
  t.match(slackSignatureProblem(secret, {}, body, now), /no Slack signature/)
})
