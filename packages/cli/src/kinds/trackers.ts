import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Context, Kind } from '../kind.js'
import { Name } from './fields.js'

const EnvName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'An environment variable apply reads the secret from' })
const Tracker = Type.Object(
  {
    name: Name,
    kind: Type.Enum(['jira', 'linear']),
    enabled: Type.Optional(Type.Boolean()),
    project: Type.String({ minLength: 1, description: 'jira: the project key; linear: the team id' }),
    siteUrl: Type.Optional(
      Type.String({ pattern: '^https?://\\S+$', description: 'jira: the site; linear: its GraphQL endpoint if not Linear’s' }),
    ),
    accountEmail: Type.Optional(Type.String({ minLength: 3, description: 'jira: the account the API token belongs to' })),
    issueType: Type.Optional(Type.String({ minLength: 1, description: 'jira: the issue type of new tickets (Task unless given)' })),
    credentialsFrom: Type.Object(
      {
        credential: Type.Optional(EnvName),
        webhookSecret: Type.Optional(EnvName),
      },
      {
        additionalProperties: false,
        description:
          'Where apply finds the API token (jira) or key (linear) and the webhook secret: environment variables, never the file. A Jira tracker created without a webhook secret gets one, printed once',
      },
    ),
  },
  { additionalProperties: false, title: 'Tracker' },
)
type Tracker = Static<typeof Tracker>
type Secret = 'credential' | 'webhookSecret'

const envName = (tracker: { name: string }, secret: Secret) =>
  `DIVINUX_TRACKER_${tracker.name.toUpperCase().replaceAll(/[^A-Z0-9]+/g, '_')}_${secret === 'credential' ? 'CREDENTIAL' : 'WEBHOOK_SECRET'}`
const secretOf = (env: Context['env'], tracker: Tracker, secret: Secret) => {
  const variable = tracker.credentialsFrom[secret]
  return variable ? env[variable] : undefined
}
/** What cannot change once the tracker exists: the service keeps it with the sealed credential. */
const FIXED = ['kind', 'siteUrl', 'accountEmail'] as const

/** Ticket trackers (Jira Cloud, Linear), without their secrets: the file names the environment variables apply reads them from. */
export const trackers: Kind<Tracker> = {
  noun: 'tracker',
  file: 'trackers.yaml',
  key: 'trackers',
  entry: Tracker,
  names: 'trackers',
  unseen: ['credentialsFrom'],
  identity: (tracker) => tracker.name,
  references: () => [],
  problems: (tracker) =>
    tracker.kind === 'jira'
      ? (['siteUrl', 'accountEmail'] as const)
          .filter((field) => tracker[field] === undefined)
          .map((field) => ({ at: [field], message: `a Jira tracker needs its ${field}` }))
      : (['accountEmail', 'issueType'] as const)
          .filter((field) => tracker[field] !== undefined)
          .map((field) => ({ at: [field], message: `is a Jira tracker's only` })),
  creatable: ({ env }, tracker) => {
    const needed: Secret[] = tracker.kind === 'jira' ? ['credential'] : ['credential', 'webhookSecret']
    return needed.flatMap((secret) => {
      const variable = tracker.credentialsFrom[secret]
      if (!variable)
        return [
          { at: ['credentialsFrom', secret], message: `creating it needs its ${secret}: name the environment variable that holds it` },
        ]
      return env[variable]
        ? []
        : [
            {
              at: ['credentialsFrom', secret],
              message: `the environment variable ${variable} is not set (creating it needs its ${secret})`,
            },
          ]
    })
  },

  async live({ connection: { api, orgId } }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/trackers', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the trackers',
    )
    return rows.map((row) => ({
      id: row.id,
      entry: {
        name: row.name,
        kind: row.kind,
        enabled: row.enabled,
        project: row.project,
        ...(row.siteUrl ? { siteUrl: row.siteUrl } : {}),
        ...(row.kind === 'jira' ? { accountEmail: row.accountEmail ?? '', issueType: row.issueType ?? 'Task' } : {}),
        credentialsFrom: { credential: envName(row, 'credential'), webhookSecret: envName(row, 'webhookSecret') },
      },
    }))
  },

  async create({ connection: { api, orgId }, env }, tracker) {
    const credential = secretOf(env, tracker, 'credential') ?? ''
    const webhookSecret = secretOf(env, tracker, 'webhookSecret')
    const body =
      tracker.kind === 'jira'
        ? {
            name: tracker.name,
            kind: 'jira' as const,
            siteUrl: tracker.siteUrl ?? '',
            accountEmail: tracker.accountEmail ?? '',
            apiToken: credential,
            projectKey: tracker.project,
            ...(tracker.issueType ? { issueType: tracker.issueType } : {}),
            ...(webhookSecret ? { webhookSecret } : {}),
          }
        : {
            name: tracker.name,
            kind: 'linear' as const,
            apiKey: credential,
            teamId: tracker.project,
            webhookSecret: webhookSecret ?? '',
            ...(tracker.siteUrl ? { apiUrl: tracker.siteUrl } : {}),
          }
    const created = await answered(
      api.POST('/api/v1/organizations/{orgId}/trackers', { params: { path: { orgId } }, body }),
      `connecting the tracker ${tracker.name}`,
    )
    if (tracker.enabled === false)
      await answered(
        api.PATCH('/api/v1/organizations/{orgId}/trackers/{trackerId}', {
          params: { path: { orgId, trackerId: created.id } },
          body: { enabled: false },
        }),
        `disabling the tracker ${tracker.name}`,
      )
    return [
      `register its webhook in ${tracker.kind === 'jira' ? 'Jira' : 'Linear'}: ${created.webhookUrl}`,
      ...(webhookSecret ? [] : [`its webhook secret (shown once): ${created.webhookSecret}`]),
    ]
  },

  async update({ connection: { api, orgId }, env }, live, tracker) {
    const fixed = FIXED.find((field) => field !== 'kind' && tracker[field] !== undefined && tracker[field] !== live.entry[field])
    if (live.entry.kind !== tracker.kind || fixed)
      throw new Error(
        `the tracker ${tracker.name}'s ${fixed ?? 'kind'} cannot change: remove it from the file (apply --prune), apply, then add it again`,
      )
    const credential = secretOf(env, tracker, 'credential')
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/trackers/{trackerId}', {
        params: { path: { orgId, trackerId: live.id } },
        body: {
          ...(tracker.enabled !== undefined ? { enabled: tracker.enabled } : {}),
          project: tracker.project,
          ...(tracker.kind === 'jira' && tracker.issueType ? { issueType: tracker.issueType } : {}),
          ...(credential ? { credential } : {}),
        },
      }),
      `changing the tracker ${tracker.name}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/trackers/{trackerId}', { params: { path: { orgId, trackerId: live.id } } }),
      `disconnecting the tracker ${live.entry.name}`,
    )
  },
}
