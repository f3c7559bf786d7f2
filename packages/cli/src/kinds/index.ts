import type { Kind } from '../kind.js'
import { alertSources } from './alert-sources.js'
import { checks } from './checks.js'
import { chatIntegrations, outboundWebhooks } from './destinations.js'
import { escalationPolicies } from './escalation-policies.js'
import { incidentRules } from './incident-rules.js'
import { incidentSeverities } from './incident-severities.js'
import { incidentChecklists, incidentFields, incidentTypes } from './incident-shapes.js'
import { schedules } from './schedules.js'
import { services } from './services.js'
import { statusPages } from './status-pages.js'
import { teams } from './teams.js'
import { trackers } from './trackers.js'
import { workflows } from './workflows.js'

/**
 * Every kind, in the order apply writes them: each after what it names (workflows name trackers, policies name chat
 * integrations, outbound webhooks, schedules and teams, services name teams and policies, checks name policies and status components,
 * incident types name incident fields, workflows name policies, people, teams, schedules, fields and severities).
 * Pruning deletes in the reverse order.
 */
export const kinds = [
  chatIntegrations,
  outboundWebhooks,
  trackers,
  teams,
  schedules,
  escalationPolicies,
  services,
  incidentRules,
  alertSources,
  statusPages,
  checks,
  incidentSeverities,
  incidentFields,
  incidentChecklists,
  incidentTypes,
  workflows,
] as unknown as Kind[]
