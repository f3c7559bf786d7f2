import type { Kind } from '../kind.js'
import { alertSources } from './alert-sources.js'
import { checks } from './checks.js'
import { chatIntegrations, outboundWebhooks } from './destinations.js'
import { escalationPolicies } from './escalation-policies.js'
import { incidentRules } from './incident-rules.js'
import { incidentFields, incidentTypes } from './incident-shapes.js'
import { schedules } from './schedules.js'
import { services } from './services.js'
import { statusPages } from './status-pages.js'
import { teams } from './teams.js'
import { workflows } from './workflows.js'

/**
 * Every kind, in the order apply writes them: each after what it names (policies name chat
 * integrations, outbound webhooks, schedules and teams, services name teams and policies, checks name policies and status components,
 * incident types name incident fields, workflows name policies, people, teams, schedules and fields).
 * Pruning deletes in the reverse order.
 */
export const kinds = [
  chatIntegrations,
  outboundWebhooks,
  teams,
  schedules,
  escalationPolicies,
  services,
  incidentRules,
  alertSources,
  statusPages,
  checks,
  incidentFields,
  incidentTypes,
  workflows,
] as unknown as Kind[]
