import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { kinds, run } from '../src/index.js'
import { chromiumPresent } from '@svc/testkit'
import { organization, startSystem } from './setup.js'

// Configuration as code end to end: an organization set up through the API is pulled, planned and
// applied to a fresh organization of another deployment (staging and production), over real HTTP
// with an organization API token, as `pnpm cli` does it.

const workspace = await mkdtemp(path.join(tmpdir(), 'divinux-cli-'))
t.teardown(() => rm(workspace, { recursive: true, force: true }))

const production = await startSystem(t)
const acme = await organization(production, 'acme')
const minute = (days: number) => new Date(Math.floor((Date.now() + days * 86_400_000) / 60_000) * 60_000).toISOString()

const chat = await acme.call('POST', '/organizations/{orgId}/chat-integrations', {
  name: 'Ops room',
  kind: 'slack',
  webhookUrl: 'http://127.0.0.1:9/services/T0/B0/secret-ops',
})
await acme.call('POST', '/organizations/{orgId}/outbound-webhooks', {
  name: 'Incident feed',
  url: 'http://127.0.0.1:9/incidents',
  events: ['alert.created', 'alert.resolved'],
})
const team = await acme.call('POST', '/organizations/{orgId}/teams', {
  name: 'Payments',
  description: 'Takes the money',
  members: [
    { userId: acme.bob.userId, role: 'responder' },
    { userId: acme.alice.userId, role: 'manager' },
  ],
})
const schedule = await acme.call('POST', '/organizations/{orgId}/schedules', {
  name: 'Primary',
  timeZone: 'Europe/Berlin',
  layers: [
    {
      name: 'Weekly',
      start: '2026-11-30',
      handoffTime: '09:00',
      turn: { length: 1, unit: 'weeks' },
      users: [acme.bob.userId, acme.alice.userId],
      restriction: { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '08:00', to: '18:00' },
    },
  ],
})
await acme.call('POST', `/organizations/{orgId}/schedules/${schedule.id}/overrides`, {
  userId: acme.alice.userId,
  start: minute(2),
  end: minute(3),
})
const policy = await acme.call('POST', '/organizations/{orgId}/escalation-policies', {
  name: 'Default',
  repeat: 1,
  steps: [
    { delayMinutes: 5, targets: [{ type: 'schedule', id: schedule.id }] },
    {
      delayMinutes: 10,
      targets: [
        { type: 'team', id: team.id },
        { type: 'user', id: acme.alice.userId },
        { type: 'chat', id: chat.id },
      ],
    },
  ],
})
await acme.call('POST', '/organizations/{orgId}/services', { key: 'payments', name: 'Payments', tier: 1 })
await acme.call('POST', '/organizations/{orgId}/services', {
  key: 'checkout',
  name: 'Checkout',
  ownerTeamId: team.id,
  escalationPolicyId: policy.id,
  tier: 1,
  tags: ['customer-facing'],
  links: { runbook: 'https://runbooks.acme.example/checkout' },
  aliases: ['svc-checkout'],
  dependsOn: ['payments'],
})
await acme.call('PUT', '/organizations/{orgId}/incident-severities', {
  severities: [
    { key: 'critical', name: 'Critical', description: 'Everyone is affected', priority: 'P1' },
    { key: 'major', name: 'Major', priority: 'P2' },
    { key: 'minor', name: 'Minor', priority: 'P3' },
  ],
})
await acme.call('PUT', '/organizations/{orgId}/incident-rules', {
  rules: [{ kind: 'fingerprint' }, { kind: 'service', windowMinutes: 15 }, { kind: 'dependency', windowMinutes: 20 }],
})
await acme.call('POST', '/organizations/{orgId}/webhooks', {
  name: 'Monitoring',
  format: 'alertmanager',
  escalationPolicyId: policy.id,
  routingRules: [{ match: { priorities: ['P1'], services: ['checkout'] }, escalationPolicyId: policy.id }],
})
const page = await acme.call('POST', '/statuspages/organizations/{orgId}/pages', {
  name: 'Acme',
  slug: 'acme-status',
  published: true,
  locales: ['en', 'de'],
  theme: { '--header-background': '#102a43', '--header-text': '#ffffff' },
  headerLinks: [{ label: 'Support', url: 'https://acme.example/support' }],
  footerText: 'Acme Ltd',
})
const group = await acme.call('POST', `/statuspages/organizations/{orgId}/pages/${page.id}/component-groups`, { name: 'Shop' })
const api = await acme.call('POST', `/statuspages/organizations/{orgId}/pages/${page.id}/components`, {
  name: 'API',
  alertServices: ['api'],
})
await acme.call('POST', `/statuspages/organizations/{orgId}/pages/${page.id}/components`, {
  name: 'Checkout',
  groupId: group.id,
  alertServices: ['checkout'],
})
await acme.call('POST', '/organizations/{orgId}/workflows', {
  name: 'Checkout P1s',
  trigger: 'alert.created',
  conditions: [
    { type: 'priority', in: ['P1'] },
    { type: 'service', in: ['checkout'] },
  ],
  actions: [{ type: 'escalate', escalationPolicyId: policy.id }, { type: 'open_command_room' }],
})
await acme.call('POST', '/organizations/{orgId}/incident-fields', {
  key: 'impact',
  name: 'Customer impact',
  kind: 'select',
  options: ['none', 'some', 'all'],
})
await acme.call('POST', '/organizations/{orgId}/incident-fields', {
  key: 'root_cause',
  name: 'Root cause',
  kind: 'text',
  required: 'resolve',
})
await acme.call('POST', '/organizations/{orgId}/incident-types', {
  key: 'security',
  name: 'Security',
  fields: [{ field: 'impact', required: 'declare' }],
  roles: [{ role: 'forensics', tasks: ['Image the host'] }],
})
await acme.call('PUT', '/organizations/{orgId}/incident-checklists/commander', { tasks: ['Open a bridge', 'Post the first update'] })
const jira = await acme.call('POST', '/organizations/{orgId}/trackers', {
  name: 'Jira',
  kind: 'jira',
  siteUrl: 'http://127.0.0.1:9',
  accountEmail: 'bot@acme.example',
  apiToken: 'atlassian-token-1',
  projectKey: 'SEC',
})
await acme.call('POST', '/organizations/{orgId}/workflows', {
  name: 'Security response',
  trigger: 'incident.declared',
  conditions: [{ type: 'incident_type', in: ['security'] }],
  actions: [
    {
      type: 'request_responders',
      targets: [
        { type: 'escalation_policy', id: policy.id },
        { type: 'user', id: acme.alice.userId },
      ],
    },
    { type: 'set_field', field: 'impact', value: 'some' },
    { type: 'post_status_update', body: 'We are looking into {{incident.title}}.' },
    { type: 'create_ticket', trackerId: jira.id },
  ],
  oncePerIncident: true,
  delayMinutes: 5,
})
await acme.call('POST', '/synthetics/organizations/{orgId}/checks', {
  name: 'API health',
  kind: 'http',
  frequencySeconds: 60,
  request: { url: 'https://api.acme.example/health' },
  alertRule: { priority: 'P2', escalationPolicyId: policy.id },
  statusComponentIds: [api.id],
  paused: true,
})

// Staging: another deployment, with a fresh organization of the same people. Started before the
// tests, as tap ends the file when its queued tests are done.
const staging = await startSystem(t)
const fresh = await organization(staging, 'acme-staging')

/** Runs the CLI against an organization: its exit status and what it printed. */
async function cli(env: Record<string, string>, ...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const status = await run(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, env)
  return { status, out: out.join('\n'), err: err.join('\n') }
}

const pulled = path.join(workspace, 'production')
const yamlFiles = async (directory: string) => (await readdir(directory)).filter((name) => name.endsWith('.yaml')).sort()

t.test('pull writes one file per kind, naming things by key, name and e-mail, never by id or secret', async (t) => {
  const pulling = await cli(acme.env, 'pull', pulled)
  t.equal(pulling.status, 0, pulling.err)
  t.same(await yamlFiles(pulled), [
    'alert-sources.yaml',
    'chat-integrations.yaml',
    'checks.yaml',
    'escalation-policies.yaml',
    'incident-checklists.yaml',
    'incident-fields.yaml',
    'incident-rules.yaml',
    'incident-severities.yaml',
    'incident-types.yaml',
    'outbound-webhooks.yaml',
    'schedules.yaml',
    'services.yaml',
    'status-pages.yaml',
    'teams.yaml',
    'trackers.yaml',
    'workflows.yaml',
  ])
  const text = async (file: string) => readFile(path.join(pulled, file), 'utf8')
  t.match(await text('teams.yaml'), /^# yaml-language-server: \$schema=\.\/\.schemas\/teams\.json\n/)
  t.same(parse(await text('teams.yaml')).teams, [
    {
      name: 'Payments',
      description: 'Takes the money',
      members: [
        { email: 'alice@acme.example', role: 'manager' },
        { email: 'bob@acme.example', role: 'responder' },
      ],
    },
  ])
  t.same(parse(await text('escalation-policies.yaml')).escalationPolicies[0].steps, [
    { delayMinutes: 5, targets: [{ schedule: 'Primary' }] },
    { delayMinutes: 10, targets: [{ team: 'Payments' }, { user: 'alice@acme.example' }, { chat: 'Ops room' }] },
  ])
  t.match(parse(await text('services.yaml')).services, [
    { key: 'checkout', ownerTeam: 'Payments', escalationPolicy: 'Default', dependsOn: ['payments'] },
    { key: 'payments' },
  ])
  t.same(parse(await text('chat-integrations.yaml')).chatIntegrations, [
    { name: 'Ops room', kind: 'slack', enabled: true, credentialsFrom: { webhookUrl: 'DIVINUX_CHAT_OPS_ROOM_WEBHOOK_URL' } },
  ])
  t.match(parse(await text('workflows.yaml')).workflows, [
    { name: 'Checkout P1s', actions: [{ type: 'escalate', escalationPolicy: 'Default' }, { type: 'open_command_room' }] },
    {
      name: 'Security response',
      trigger: 'incident.declared',
      oncePerIncident: true,
      delayMinutes: 5,
      actions: [
        {
          type: 'request_responders',
          targets: [
            { type: 'escalation_policy', name: 'Default' },
            { type: 'user', name: 'alice@acme.example' },
          ],
        },
        { type: 'set_field', field: 'impact', value: 'some' },
        { type: 'post_status_update', body: 'We are looking into {{incident.title}}.' },
        { type: 'create_ticket', tracker: 'Jira' },
      ],
    },
  ])
  t.same(parse(await text('incident-types.yaml')).incidentTypes, [
    {
      key: 'security',
      name: 'Security',
      description: null,
      fields: [{ field: 'impact', required: 'declare' }],
      roles: [{ role: 'forensics', tasks: ['Image the host'] }],
    },
  ])
  t.same(parse(await text('incident-checklists.yaml')).incidentChecklists, [
    { role: 'commander', tasks: ['Open a bridge', 'Post the first update'] },
  ])
  t.match(parse(await text('incident-fields.yaml')).incidentFields, [
    { key: 'impact', kind: 'select', options: ['none', 'some', 'all'], required: 'never' },
    { key: 'root_cause', kind: 'text', options: [], required: 'resolve' },
  ])
  t.match(parse(await text('checks.yaml')).checks, [
    { name: 'API health', statusComponents: ['acme-status/API'], alertRule: { escalationPolicy: 'Default' } },
  ])
  for (const file of await yamlFiles(pulled)) {
    t.notMatch(await text(file), /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-/, `${file} names nothing by id`)
    t.notMatch(await text(file), /apiKey|signingSecret:|dvx_|secret-ops|whsec_/, `${file} holds no secret`)
  }
  const schema = JSON.parse(await readFile(path.join(pulled, '.schemas', 'teams.json'), 'utf8'))
  t.match(schema, { $schema: 'https://json-schema.org/draft/2020-12/schema', properties: { teams: { type: 'array' } } })

  const planned = await cli(acme.env, 'plan', pulled)
  t.equal(planned.status, 0, 'pull then plan: nothing differs')
  t.match(planned.out, /0 to create, 0 to change, 0 to delete, 19 unchanged/)
})

t.test('the pulled directory applies unchanged to a fresh organization and reproduces it; applying twice changes nothing', async (t) => {
  t.same(parse(await readFile(path.join(pulled, 'trackers.yaml'), 'utf8')).trackers, [
    {
      name: 'Jira',
      kind: 'jira',
      enabled: true,
      project: 'SEC',
      siteUrl: 'http://127.0.0.1:9',
      accountEmail: 'bot@acme.example',
      issueType: 'Task',
      credentialsFrom: { credential: 'DIVINUX_TRACKER_JIRA_CREDENTIAL', webhookSecret: 'DIVINUX_TRACKER_JIRA_WEBHOOK_SECRET' },
    },
  ])
  fresh.env.DIVINUX_TRACKER_JIRA_CREDENTIAL = 'atlassian-token-staging'
  const withoutCredential = await cli(fresh.env, 'plan', pulled)
  t.equal(withoutCredential.status, 1)
  t.equal(
    withoutCredential.err,
    'chat-integrations.yaml:7: chatIntegrations[0].credentialsFrom.webhookUrl: the environment variable DIVINUX_CHAT_OPS_ROOM_WEBHOOK_URL is not set (creating it needs its webhookUrl)\nnothing was changed',
  )
  // The credential comes from the environment of whoever applies, as a CI secret would.
  fresh.env.DIVINUX_CHAT_OPS_ROOM_WEBHOOK_URL = 'http://127.0.0.1:9/services/T1/B1/secret-staging'
  const planned = await cli(fresh.env, 'plan', pulled)
  t.equal(planned.status, 2, 'something differs: exit 2, as terraform plan -detailed-exitcode')
  t.match(planned.out, /^\+ team Payments \(teams\.yaml:3\)$/m)
  t.match(planned.out, /^~ incident rules the organization’s \(incident-rules\.yaml:3\)$/m)
  t.match(planned.out, /^~ incident severities the organization’s \(incident-severities\.yaml:3\)$/m)
  t.match(planned.out, /17 to create, 2 to change, 0 to delete, 0 unchanged/)

  const applied = await cli(fresh.env, 'apply', pulled)
  t.equal(applied.status, 0, applied.err)
  t.match(applied.out, /created alert source Monitoring\n {4}its API key \(shown once\): \S+; send alerts to \/api\/v1\/webhooks\/ingest\//)
  t.match(applied.out, /created outbound webhook Incident feed\n {4}its signing secret \(shown once\): whsec_\S+/)
  t.match(
    applied.out,
    /created tracker Jira\n {4}register its webhook in Jira: \S+\/api\/v1\/trackers\/\S+\/events\n {4}its webhook secret \(shown once\): \S+/,
  )
  t.match(applied.out, /17 created, 2 changed, 0 deleted, 0 unchanged/)

  const again = await cli(fresh.env, 'apply', pulled)
  t.match(again.out, /0 created, 0 changed, 0 deleted, 19 unchanged/, 'apply twice: the second changes nothing')
  t.equal((await cli(fresh.env, 'plan', pulled)).status, 0)

  const reproduced = path.join(workspace, 'staging')
  t.equal((await cli(fresh.env, 'pull', reproduced)).status, 0)
  for (const file of await yamlFiles(pulled))
    t.equal(await readFile(path.join(reproduced, file), 'utf8'), await readFile(path.join(pulled, file), 'utf8'), `${file} is the same`)
})

/** A copy of the pulled directory with one file's data changed. */
async function edited(name: string, file: string, change: (data: Record<string, unknown[]>) => void) {
  const directory = path.join(workspace, name)
  await cp(pulled, directory, { recursive: true })
  const data = parse(await readFile(path.join(directory, file), 'utf8'))
  change(data)
  await writeFile(path.join(directory, file), stringify(data))
  return directory
}

t.test('bad input names the file, the line and the field, and changes nothing', async (t) => {
  const stranger = await edited('stranger', 'teams.yaml', (data) => {
    ;(data.teams as Array<{ members: Array<{ email: string }> }>)[0]!.members[1]!.email = 'nobody@acme.example'
  })
  const refused = await cli(fresh.env, 'apply', stranger)
  t.equal(refused.status, 1)
  t.equal(
    refused.err,
    'teams.yaml:7: teams[0].members[1].email: no member of the organization with the e-mail nobody@acme.example\nnothing was changed',
  )

  const wrongType = await edited('wrong-type', 'services.yaml', (data) => {
    ;(data.services as Array<Record<string, unknown>>)[1]!.tier = 'high'
  })
  const typed = await cli(fresh.env, 'plan', wrongType)
  t.equal(typed.status, 1)
  t.match(typed.err, /^services\.yaml:\d+: services\[1\]\.tier: /)
  const line = Number(/^services\.yaml:(\d+)/.exec(typed.err)![1])
  t.match((await readFile(path.join(wrongType, 'services.yaml'), 'utf8')).split('\n')[line - 1], /tier: high/, 'the line is the field’s')

  const twice = await edited('twice', 'teams.yaml', (data) => {
    data.teams!.push({ ...(data.teams![0] as object) })
  })
  t.match((await cli(fresh.env, 'plan', twice)).err, /^teams\.yaml:\d+: teams\[1\]: team Payments is named twice/)

  const broken = await edited('broken', 'teams.yaml', () => {})
  await writeFile(path.join(broken, 'checks.yaml'), 'checks:\n  - name: a\n    name: b\n')
  t.match((await cli(fresh.env, 'plan', broken)).err, /^checks\.yaml:3: not YAML: Map keys must be unique/)
  t.equal((await cli(fresh.env, 'plan', pulled)).status, 0, 'the organization is as it was')
})

t.test('a change is planned field by field; what the files no longer name is deleted only with --prune', async (t) => {
  const changed = await edited('changed', 'services.yaml', (data) => {
    const [checkout] = data.services as Array<Record<string, unknown>>
    checkout!.tier = 2
    checkout!.dependsOn = []
    data.services = [checkout!]
  })
  const planned = await cli(fresh.env, 'plan', changed)
  t.equal(planned.status, 2)
  t.match(planned.out, /~ service checkout \(services\.yaml:\d+\)\n {4}tier: 1 → 2\n {4}dependsOn: \["payments"\] → \[\]/)
  t.match(planned.out, /· service payments: not in the files, kept \(--prune deletes it\)/)
  t.match((await cli(fresh.env, 'plan', changed, '--prune')).out, /- service payments: not in the files, deleted/)

  const applied = await cli(fresh.env, 'apply', changed, '--prune')
  t.equal(applied.status, 0, applied.err)
  t.match(applied.out, /changed service checkout\ndeleted service payments\n/)
  const services = (await fresh.call('GET', '/organizations/{orgId}/services')).data as unknown as Array<{
    key: string
    tier: number
    dependsOn: string[]
  }>
  t.match(services, [{ key: 'checkout', tier: 2, dependsOn: [] }])
  t.equal(services.length, 1)
})

t.test('apply stops at the first refusal with the server’s message', async (t) => {
  const neighbour = await organization(staging, 'neighbour')
  await neighbour.call('POST', '/statuspages/organizations/{orgId}/pages', { name: 'Held', slug: 'held' })
  const clash = await edited('clash', 'status-pages.yaml', (data) => {
    data.statusPages!.push({ slug: 'held', name: 'Ours' })
  })
  const refused = await cli(fresh.env, 'apply', clash)
  t.equal(refused.status, 1)
  t.match(refused.err, /^refused: creating the status page held: 409 /)
  t.match(refused.err, /stopped there/)
})

t.test('a Backstage catalog imports through the CLI, and importing it again changes nothing', async (t) => {
  const file = path.join(workspace, 'catalog-info.yaml')
  await writeFile(
    file,
    [
      'apiVersion: backstage.io/v1alpha1',
      'kind: Component',
      'metadata:',
      '  name: search',
      '  annotations:',
      '    github.com/project-slug: acme/search',
      'spec:',
      '  type: service',
      '  lifecycle: production',
      '  owner: group:payments',
      '  dependsOn: [component:checkout]',
      '',
    ].join('\n'),
  )
  const imported = await cli(fresh.env, 'import-backstage', file)
  t.equal(imported.status, 0, imported.err)
  t.equal(imported.out, 'created service search\n1 created, 0 changed, 0 unchanged')
  t.match((await cli(fresh.env, 'import-backstage', file)).out, /^0 created, 0 changed, 1 unchanged$/)
  const pulledAgain = path.join(workspace, 'with-search')
  await cli(fresh.env, 'pull', pulledAgain)
  const pulledServices = parse(await readFile(path.join(pulledAgain, 'services.yaml'), 'utf8')).services as Array<{ key: string }>
  t.match(
    pulledServices.find((service) => service.key === 'search'),
    { ownerTeam: 'Payments', dependsOn: ['checkout'], links: { repository: 'https://github.com/acme/search' } },
  )
})

t.test('every kind is changed through its file, then deleted with --prune', async (t) => {
  const current = path.join(workspace, 'current')
  t.equal((await cli(fresh.env, 'pull', current)).status, 0)
  const edit = async (file: string, change: (data: Record<string, Array<Record<string, unknown>>>) => void) => {
    const data = parse(await readFile(path.join(current, file), 'utf8'))
    change(data)
    await writeFile(path.join(current, file), stringify(data))
  }
  const first = (data: Record<string, Array<Record<string, unknown>>>, key: string) => data[key]![0]!
  await edit('chat-integrations.yaml', (data) => void (first(data, 'chatIntegrations').enabled = false))
  await edit('outbound-webhooks.yaml', (data) => void (first(data, 'outboundWebhooks').events = ['alert.created']))
  await edit('teams.yaml', (data) => {
    const team = first(data, 'teams')
    team.description = 'Takes the money, carefully'
    team.members = [{ email: 'bob@acme.example', role: 'manager' }]
  })
  await edit('schedules.yaml', (data) => {
    const schedule = first(data, 'schedules')
    schedule.description = 'Weekdays'
    schedule.overrides = [{ email: 'bob@acme.example', start: minute(5), end: minute(6) }]
  })
  await edit('escalation-policies.yaml', (data) => void (first(data, 'escalationPolicies').repeat = 2))
  await edit('alert-sources.yaml', (data) => {
    const source = first(data, 'alertSources')
    source.defaultPriority = 'P2'
    source.signed = true
  })
  await edit('status-pages.yaml', (data) => {
    const page = first(data, 'statusPages')
    page.name = 'Acme (staging)'
    page.visibility = 'private'
    page.viewerEmailDomains = ['customer.example']
    page.theme = { '--link': '#1a4d8f' }
    page.footerText = null
    page.groups = []
    page.components = [{ name: 'API', description: 'The public API', group: null, alertServices: ['api'] }]
  })
  await edit('checks.yaml', (data) => void (first(data, 'checks').frequencySeconds = 120))
  await edit('workflows.yaml', (data) => void (first(data, 'workflows').enabled = false))
  await edit('incident-fields.yaml', (data) => void (first(data, 'incidentFields').options = ['none', 'some', 'most', 'all']))
  await edit('incident-types.yaml', (data) => void (first(data, 'incidentTypes').description = 'Anything that touches secrets'))

  const changed = await cli(fresh.env, 'apply', current)
  t.equal(changed.status, 0, changed.err)
  t.match(changed.out, /changed alert source Monitoring\n {4}its new signing secret \(shown once\): \S+/)
  t.match(changed.out, /11 changed/)
  t.equal((await cli(fresh.env, 'plan', current)).status, 0, 'what was applied is what the files say')
  const schedule = parse(await readFile(path.join(current, 'schedules.yaml'), 'utf8')).schedules[0]
  const again = path.join(workspace, 'current-again')
  await cli(fresh.env, 'pull', again)
  t.same(parse(await readFile(path.join(again, 'schedules.yaml'), 'utf8')).schedules[0], schedule, 'the override replaced')
  t.same(
    parse(await readFile(path.join(again, 'status-pages.yaml'), 'utf8')).statusPages[0].components.map(
      (component: { name: string }) => component.name,
    ),
    ['API'],
    'the page’s other component and its group are gone',
  )
  t.match(
    parse(await readFile(path.join(again, 'status-pages.yaml'), 'utf8')).statusPages[0],
    {
      visibility: 'private',
      viewerEmailDomains: ['customer.example'],
      theme: { '--link': '#1a4d8f' },
      headerLinks: [{ label: 'Support', url: 'https://acme.example/support' }],
      footerText: null,
    },
    'who reads the page and how it looks are configuration too',
  )
  t.notOk(
    '--header-background' in parse(await readFile(path.join(again, 'status-pages.yaml'), 'utf8')).statusPages[0].theme,
    'a colour the file left out is back to its default',
  )

  for (const kind of kinds.filter((kind) => !kind.singleton)) await writeFile(path.join(current, kind.file), `${kind.key}: []\n`)
  const pruned = await cli(fresh.env, 'apply', current, '--prune')
  t.equal(pruned.status, 0, pruned.err)
  t.match(pruned.out, /^deleted workflow Checkout P1s$/m)
  t.match(pruned.out, /^deleted chat integration Ops room$/m)
  const emptied = path.join(workspace, 'emptied')
  await cli(fresh.env, 'pull', emptied)
  for (const kind of kinds.filter((kind) => !kind.singleton && kind.key !== 'statusPages'))
    t.same(parse(await readFile(path.join(emptied, kind.file), 'utf8'))[kind.key], [], `${kind.file}: nothing left`)
  t.same(parse(await readFile(path.join(emptied, 'status-pages.yaml'), 'utf8')).statusPages, [])
})

t.test('a browser check is configuration too: its script a YAML block, applied and pulled back as written', async (t) => {
  if (!(await chromiumPresent(t, 'applying a browser check'))) return
  const browser = await organization(staging, 'acme-browser')
  const directory = path.join(workspace, 'browser')
  await mkdir(directory, { recursive: true })
  const script = "await page.goto('https://shop.acme.example/')\nawait expect(page.getByRole('button', { name: 'Buy' })).toBeVisible()\n"
  await writeFile(
    path.join(directory, 'checks.yaml'),
    stringify({
      checks: [{ name: 'Shop', kind: 'browser', frequencySeconds: 300, timeoutMs: 30000, paused: true, request: { script } }],
    }),
  )
  t.match(await readFile(path.join(directory, 'checks.yaml'), 'utf8'), /script: \|/, 'the script reads as a block')
  const applied = await cli(browser.env, 'apply', directory)
  t.equal(applied.status, 0, applied.err)
  t.match(applied.out, /created check Shop/)
  const pulled = path.join(workspace, 'browser-pulled')
  await cli(browser.env, 'pull', pulled)
  t.match(parse(await readFile(path.join(pulled, 'checks.yaml'), 'utf8')).checks, [
    { name: 'Shop', kind: 'browser', frequencySeconds: 300, request: { script } },
  ])
  await writeFile(
    path.join(directory, 'checks.yaml'),
    stringify({
      checks: [{ name: 'Shop', kind: 'browser', frequencySeconds: 300, paused: true, request: { script: 'await page.goto(' } }],
    }),
  )
  const refused = await cli(browser.env, 'apply', directory)
  t.not(refused.status, 0)
  t.match(refused.err, /request\/script does not compile/, 'the service’s refusal, named')
})
