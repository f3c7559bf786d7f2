import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { workspaceRoot } from '@svc/testkit'

// Each product table belongs to one surface. Another surface learns what it needs through the
// owner's read module (its reads.ts, wired in by the service) or through events, so a table can
// change shape with only its owner changing.
const root = workspaceRoot()
const owners: Record<string, string[]> = {
  alerting: [
    'alerts',
    'alertEvents',
    'deployEvents',
    'webhookConfigs',
    'webhookDeliveries',
    'teams',
    'teamMembers',
    'schedules',
    'scheduleOverrides',
    'escalationPolicies',
    'alertEscalations',
    'notificationAttempts',
    'alertAckLinks',
    'silences',
    'calendarFeeds',
    'chatIntegrations',
    'outboundWebhooks',
    'outboundWebhookDeliveries',
    'workflows',
    'workflowRuns',
    'incidents',
    'incidentRoles',
    'incidentAlerts',
    'incidentTimeline',
    'incidentRuleSets',
    'serviceEdges',
    'incidentExclusions',
    'incidentResponders',
    'incidentChatChannels',
    'incidentChannelRequests',
    'slackMessages',
    'slackUsers',
    'serviceSupportHours',
    'incidentStatusLinks',
    'incidentSettings',
    'incidentFields',
    'incidentTypes',
    'incidentFollowUps',
    'incidentChecklists',
    'incidentTaskTicks',
    'trackerIntegrations',
    'services',
  ],
  insights: [
    'analyses',
    'analysisEvents',
    'rcas',
    'rcaIncidentLinks',
    'rcaActionItems',
    'aiUsage',
    'aiReservations',
    'usageEvents',
    'tenantBudgets',
  ],
  'product-users': ['notificationPreferences', 'contactMethods'],
  statuspages: [
    'statusPages',
    'statusComponentGroups',
    'statusComponents',
    'statusComponentChanges',
    'statusIncidents',
    'statusIncidentComponents',
    'statusIncidentUpdates',
    'statusSubscribers',
    'statusNotifications',
  ],
  synthetics: ['syntheticChecks', 'syntheticSecrets', 'syntheticRelays', 'syntheticRuns', 'syntheticRollups'],
}

const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

async function sources(folder: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) found.push(path.join(entry.parentPath, entry.name))
  }
  return found
}

for (const surface of Object.keys(owners)) {
  t.test(`the ${surface} surface touches only its own tables`, async (t) => {
    const foreign = Object.entries(owners)
      .filter(([owner]) => owner !== surface)
      .flatMap(([, tables]) => tables)
    for (const file of await sources(path.join(root, 'plugins', surface, 'src'))) {
      const text = await readFile(file, 'utf8')
      const touched = foreign.filter((table) => new RegExp(`divinux\\.(${table}|${snake(table)})\\b`).test(text))
      t.same(touched, [], path.relative(root, file))
    }
  })
}
