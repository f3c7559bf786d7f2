/**
 * Stable names for the OpenAPI document, so generated clients have method names (decision 0025).
 *
 * An operation's id is derived from its method and path unless its schema names one: the
 * method, then each fixed segment after `/api/v1` in PascalCase, then `By<Param>` when the path
 * ends in a parameter. `GET /api/v1/organizations/:orgId/invitations` is
 * `getOrganizationsInvitations`, `DELETE …/invitations/:invitationId` is
 * `deleteOrganizationsInvitationsByInvitationId`. It changes only when the path does, which is a
 * breaking change anyway; a test keeps every id unique.
 */
export function operationIdOf(method: string, url: string): string {
  const segments = url.split('/').filter((segment) => segment !== '')
  const meaningful = segments[0] === 'api' && segments[1] === 'v1' ? segments.slice(2) : segments
  const words = meaningful.filter((segment) => !segment.startsWith(':')).map(pascal)
  const last = meaningful.at(-1)
  const byParam = last?.startsWith(':') ? `By${pascal(last.slice(1))}` : ''
  return `${method.toLowerCase()}${words.join('')}${byParam}`
}

function pascal(segment: string): string {
  return segment
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')
}

/** Every tag an operation may carry, with what it groups: the document declares them (OpenAPI `tags`). */
export const apiTags: Readonly<Record<string, string>> = {
  health: 'Liveness and readiness probes for load balancers and orchestrators',
  auth: 'Session cookies from ID tokens, refresh and sign-out',
  users: 'The signed-in person: profile, notification preferences, contact methods, subscriptions, activity',
  organizations: 'Organizations and the caller’s role in them',
  members: 'An organization’s members, their organization and product roles, ownership transfer',
  invitations: 'Invitations to an organization: send, resend, revoke, accept',
  admin: 'Platform administration (platform roles)',
  audit: 'The organization’s audit log',
  analytics: 'Product usage telemetry (Segment-style track calls) and usage summaries',
  billing: 'Plans, checkout, the customer portal and Stripe’s webhooks',
  reports: 'Generated CSV and PDF reports and their signed downloads',
  sso: 'SAML single sign-on configuration and service-provider metadata',
  scim: 'SCIM 2.0 provisioning (Users, Groups, discovery) for identity providers',
  'scim tokens': 'Bearer tokens identity providers provision with',
  services: 'The service catalog: the keys alerts name services by, with owner team, escalation policy, tier, tags, links and aliases',
  'api tokens': 'Organization tokens for CI and configuration as code: product roles capped by their creator’s (decision 0030)',
  'scim groups': 'Product roles granted through SCIM groups',
  webhooks: 'Webhook configs and ingestion of monitoring events (ours and PagerDuty’s Events API v2)',
  'deploy events': 'Deploys, configuration changes and rollbacks reported by pipelines',
  alerts: 'Alerts: list, read, acknowledge, resolve, their timeline and notifications',
  incidents: 'Incidents: declared or correlated groups of alerts, responders, links, paging',
  teams: 'On-call teams',
  schedules: 'On-call schedules, overrides and who is on call',
  escalation: 'Escalation policies and support hours',
  silences: 'Silences that keep matching alerts from paging',
  workflows: 'Automations run on alert, incident and deploy events',
  chat: 'Chat integrations (Slack, Teams, Discord) and Slack interactivity',
  'outbound-webhooks': 'Signed outbound webhooks of alert events, with their delivery log',
  trackers:
    'Ticket trackers (Jira Cloud, Linear) where incident follow-ups become tickets, and the webhooks that bring ticket changes back',
  twilio: 'Twilio callbacks: SMS replies, voice and delivery status',
  statuspages: 'Status pages: components, incidents, maintenance, subscribers',
  'statuspages-public': 'The public status pages: HTML, Statuspage v2 documents, feeds, badge, widget, subscriptions',
  synthetics: 'Synthetic checks run from several regions, and their results',
  'synthetics-relay': 'The API relays (private locations) run checks through',
  'synthetics-heartbeats': 'Heartbeat checks pinged by scheduled jobs',
  insights: 'AI incident analyses, investigations and agents',
  rcas: 'Root-cause analysis documents',
  runbooks: 'Runbooks investigations follow',
  usage: 'AI usage and spend',
}
