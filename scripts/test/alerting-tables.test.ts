import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { workspaceRoot } from '@svc/testkit'

// Each alerting table belongs to one module (docs/alerting.md). A module's files name its own
// tables; what it needs of another module's it asks that module's door for. The crossings below
// are the ones still left, each with what removes it; a new one fails here, and so does a listed
// one that is gone (take it off the list).
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
  ],
  destinations: ['chat_integrations', 'outbound_webhooks', 'outbound_webhook_deliveries'],
  intake: ['webhook_configs', 'webhook_deliveries', 'deploy_events'],
  incidents: [
    'incidents',
    'incident_roles',
    'incident_alerts',
    'incident_timeline',
    'incident_rule_sets',
    'service_dependencies',
    'incident_exclusions',
    'incident_responders',
    'incident_status_links',
  ],
  paging: ['notification_attempts', 'alert_ack_links'],
  chat: ['slack_messages', 'slack_users', 'incident_chat_channels'],
  workflows: ['workflows', 'workflow_runs'],
}

const crossings: Record<string, string> = {
  'incidents/correlation/queries.ts alerts': 'correlation reads the new alerts: a read the alerts door publishes',
  'incidents/correlation/queries.ts deploy_events': 'a deploy fragment the intake door publishes',
  'incidents/queries.ts alerts': 'an incident’s alerts: a read the alerts door publishes',
}

const camel = (table: string) => table.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase())

async function filesOf(module: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(path.join(root, module), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) found.push(path.join(entry.parentPath, entry.name))
  }
  return found
}

t.test('each alerting module names only its own tables, but for the crossings listed', async (t) => {
  const seen = new Set<string>()
  for (const [module, own] of Object.entries(owners)) {
    const foreign = Object.entries(owners)
      .filter(([owner]) => owner !== module)
      .flatMap(([, tables]) => tables)
    for (const file of await filesOf(module)) {
      const text = await readFile(file, 'utf8')
      const relative = path.relative(root, file)
      for (const table of foreign) {
        if (!new RegExp(`divinux\\.(${table}|${camel(table)})\\b`).test(text)) continue
        const crossing = `${relative} ${table}`
        seen.add(crossing)
        t.ok(crossings[crossing], `${relative} names ${table}, a table of another module`)
      }
    }
    t.ok(own.length > 0)
  }
  t.same(
    Object.keys(crossings).filter((crossing) => !seen.has(crossing)),
    [],
    'every listed crossing is still there',
  )
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
