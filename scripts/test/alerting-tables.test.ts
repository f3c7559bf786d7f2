import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { workspaceRoot } from '@svc/testkit'

// Each alerting table belongs to one module (docs/alerting.md). A module's files name its own
// tables only; what it needs of another module's it asks that module's door for: a query, or,
// inside one statement, a relation the owner publishes (`alertsRelation`, `deploysRelation`,
// `enabledConfigs`) or a fragment it hands down (`ackTimeoutFromNow`, `alertsEscalating`).
const root = path.join(workspaceRoot(), 'plugins/alerting/src')
const owners: Record<string, string[]> = {
  alerts: ['alerts', 'alert_events', 'alert_escalations'],
  oncall: [
    'teams',
    'team_members',
    'schedules',
    'schedule_overrides',
    'calendar_feeds',
    'escalation_policies',
    'silences',
    'service_support_hours',
    'services',
    'service_edges',
  ],
  destinations: ['chat_integrations', 'outbound_webhooks', 'outbound_webhook_deliveries', 'tracker_integrations'],
  intake: ['webhook_configs', 'webhook_deliveries', 'deploy_events'],
  incidents: [
    'incidents',
    'incident_roles',
    'incident_alerts',
    'incident_timeline',
    'incident_rule_sets',
    'incident_exclusions',
    'incident_responders',
    'incident_status_links',
    'incident_settings',
    'incident_fields',
    'incident_types',
    'incident_follow_ups',
    'incident_checklists',
    'incident_task_ticks',
  ],
  paging: ['notification_attempts', 'alert_ack_links'],
  chat: ['slack_messages', 'slack_users', 'incident_chat_channels', 'incident_channel_requests'],
  workflows: ['workflows', 'workflow_runs'],
}

const camel = (table: string) => table.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase())

async function filesOf(module: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(path.join(root, module), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) found.push(path.join(entry.parentPath, entry.name))
  }
  return found
}

t.test('each alerting module names only its own tables', async (t) => {
  const names = (text: string, table: string) => new RegExp(`divinux\\.(${table}|${camel(table)})\\b`).test(text)
  const crossings: string[] = []
  for (const [module, own] of Object.entries(owners)) {
    const foreign = Object.entries(owners)
      .filter(([owner]) => owner !== module)
      .flatMap(([, tables]) => tables)
    let ownNamed = false
    for (const file of await filesOf(module)) {
      const text = await readFile(file, 'utf8')
      ownNamed ||= own.some((table) => names(text, table))
      for (const table of foreign) if (names(text, table)) crossings.push(`${path.relative(root, file)} names ${table}`)
    }
    t.ok(ownNamed, `${module}'s files name its own tables (the scan reads them)`)
  }
  t.same(crossings, [], 'read another module’s tables through its door: a query, a published relation or a fragment')
})

t.test('every alerting table has one owner, and the surface test knows each', async (t) => {
  const tables = Object.values(owners).flat()
  t.equal(new Set(tables).size, tables.length, 'no table has two owners')
  const surfaceTest = await readFile(path.join(workspaceRoot(), 'scripts/test/surface-tables.test.ts'), 'utf8')
  for (const table of tables) t.match(surfaceTest, `'${camel(table)}'`, `${table} is alerting's`)
})

t.test('a jsonb column is read through its reader, never cast through unknown', async (t) => {
  const casts: string[] = []
  for (const module of Object.keys(owners))
    for (const file of await filesOf(module))
      if ((await readFile(file, 'utf8')).includes('as unknown as')) casts.push(path.relative(root, file))
  t.same(casts, [], 'declare the column’s reader beside its owner: jsonColumn<T>() from @svc/db')
})
