import { Type, type Static } from 'typebox'
import { Timestamp } from '@svc/http'

export const TRACKER_KINDS = ['jira', 'linear'] as const

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Secret = (description: string) => Type.String({ minLength: 8, maxLength: 500, description })
const SiteUrl = Type.String({ maxLength: 500, pattern: '^https?://\\S+$' })

export const TrackerParams = Type.Object({ orgId: Type.String(), trackerId: Type.String() })

export const Tracker = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: Type.Enum(TRACKER_KINDS),
    siteUrl: Type.Union([Type.String(), Type.Null()]),
    accountEmail: Type.Union([Type.String(), Type.Null()]),
    project: Type.String({ description: 'Jira: the project key tickets are created in. Linear: the team id' }),
    issueType: Type.Union([Type.String(), Type.Null()], { description: 'Jira: the issue type of new tickets' }),
    enabled: Type.Boolean(),
    webhookUrl: Type.String({ description: 'Where the tracker’s webhook sends ticket changes (register it there with the secret)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Tracker' },
)

export const TrackerWithSecret = Type.Object(
  {
    ...Tracker.properties,
    webhookSecret: Type.String({
      description:
        'Shown once: the secret the tracker signs its webhook with (Jira: paste it as the webhook’s secret; Linear: the one you gave)',
    }),
  },
  { title: 'TrackerWithSecret' },
)

export const CreateTracker = Type.Union([
  Type.Object(
    {
      name: Name,
      kind: Type.Literal('jira'),
      siteUrl: Type.String({ ...SiteUrl, description: 'The Jira Cloud site, e.g. https://acme.atlassian.net' }),
      accountEmail: Type.String({
        minLength: 3,
        maxLength: 320,
        pattern: '^[^@\\s]+@[^@\\s]+$',
        description: 'The account the API token belongs to',
      }),
      apiToken: Secret('An Atlassian API token (stored sealed, never answered)'),
      projectKey: Type.String({ pattern: '^[A-Z][A-Z0-9_]{0,19}$' }),
      issueType: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: 'Default: Task' })),
      webhookSecret: Type.Optional(Secret('The secret of the Jira webhook (one is made when left out)')),
    },
    { additionalProperties: false, title: 'CreateJiraTracker' },
  ),
  Type.Object(
    {
      name: Name,
      kind: Type.Literal('linear'),
      apiKey: Secret('A Linear API key (stored sealed, never answered)'),
      teamId: Type.String({ minLength: 1, maxLength: 100, description: 'The Linear team new issues belong to' }),
      webhookSecret: Secret('The signing secret of the Linear webhook that sends issue changes here'),
      apiUrl: Type.Optional(Type.String({ ...SiteUrl, description: 'Linear’s GraphQL endpoint, when not https://api.linear.app/graphql' })),
    },
    { additionalProperties: false, title: 'CreateLinearTracker' },
  ),
])
export type CreateTracker = Static<typeof CreateTracker>

export const UpdateTracker = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    project: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Jira project key or Linear team id' })),
    issueType: Type.Optional(Type.String({ minLength: 1, maxLength: 60 })),
    credential: Type.Optional(Secret('A new API token (Jira) or API key (Linear)')),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateTracker = Static<typeof UpdateTracker>
