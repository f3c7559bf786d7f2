import t from 'tap'
import { discordMessage, slackMessage, teamsMessage, type ChatAlert } from '../src/destinations/chat-integrations/messages.js'

const alert: ChatAlert = {
  priority: 'P1',
  title: 'Checkout down',
  service: null,
  source: 'alertmanager',
  status: 'open',
  alertUrl: 'https://product.example/a/1',
  analysis: { summary: 'The 14:02 deploy broke payments.', rootCause: 'A missing environment variable' },
  reason: 'Escalation step 2',
}

t.test('each chat gets priority, title, service, link, analysis and why, in its own shape', async (t) => {
  const slack = slackMessage(alert)
  t.match(slack.text, '[P1] Checkout down (Service: not given · Source: alertmanager · Status: open)')
  t.match(slack.blocks, [
    { text: { text: /<https:\/\/product\.example\/a\/1\|\[P1\] Checkout down>/ } },
    { text: { text: '*Analysis:* The 14:02 deploy broke payments.\n*Root cause:* A missing environment variable' } },
    { type: 'context', elements: [{ text: 'Escalation step 2' }] },
  ])
  const teams = teamsMessage(alert).attachments[0]!.content
  t.match(teams.body, [
    { text: '[P1] Checkout down' },
    { isSubtle: true },
    { text: 'Analysis: The 14:02 deploy broke payments.' },
    { text: 'Escalation step 2' },
  ])
  t.match(teams.actions, [{ type: 'Action.OpenUrl', url: 'https://product.example/a/1' }])
  const discord = discordMessage(alert)
  t.match(discord.embeds[0], {
    color: 0xd92d20,
    footer: { text: 'Escalation step 2' },
    fields: [{ value: 'not given' }, {}, {}, { name: 'Analysis' }],
  })
  t.same(discord.allowed_mentions, { parse: [] }, 'an alert title never pings anyone')

  const plain = { ...alert, service: 'api', priority: 'P9', analysis: undefined, reason: undefined } as unknown as ChatAlert
  t.equal(slackMessage(plain).blocks.length, 1)
  t.equal(teamsMessage(plain).attachments[0]!.content.body.length, 2)
  t.match(discordMessage(plain).embeds[0], { color: 0x98a2b3, fields: [{ value: 'api' }, {}, {}] })
  t.notOk('footer' in discordMessage(plain).embeds[0]!)
})

t.test('an alert in an incident names its INC reference in every chat', async (t) => {
  const inIncident: ChatAlert = { ...alert, incident: { reference: 'INC-7' } }
  t.match(slackMessage(inIncident).text, '[P1] Checkout down (Incident: INC-7 · Service: not given')
  t.match(teamsMessage(inIncident).attachments[0]!.content.body[1], { text: /^Incident: INC-7 · / })
  t.match(discordMessage(inIncident).embeds[0]!.fields[0], { name: 'Incident', value: 'INC-7' })
})
