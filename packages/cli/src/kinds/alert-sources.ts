import { randomBytes } from 'node:crypto'
import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Context, Kind, Reference } from '../kind.js'
import { Name, NullableName, Priority } from './fields.js'

const Rule = Type.Object(
  {
    match: Type.Object(
      {
        priorities: Type.Optional(Type.Array(Priority, { minItems: 1 })),
        services: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
        labels: Type.Optional(Type.Record(Type.String(), Type.String())),
      },
      { additionalProperties: false },
    ),
    escalationPolicy: Type.String({ minLength: 1, description: 'By name' }),
  },
  { additionalProperties: false },
)
const Source = Type.Object(
  {
    name: Name,
    format: Type.Optional(Type.Enum(['generic', 'alertmanager', 'grafana', 'pagerduty', 'datadog', 'synthetics', 'alerting'])),
    enabled: Type.Optional(Type.Boolean()),
    defaultPriority: Type.Optional(Priority),
    autoAnalysis: Type.Optional(Type.Boolean()),
    groupWindowSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
    rateLimitPerMinute: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    signed: Type.Optional(Type.Boolean({ description: 'Requests must be signed; a new secret is printed once, never written to a file' })),
    escalationPolicy: NullableName('The policy its alerts page when no routing rule matches, by name'),
    routingRules: Type.Array(Rule, { default: [] }),
  },
  {
    additionalProperties: false,
    title: 'AlertSource',
    description: 'A webhook config alerts are sent to; its API key and signing secret are never in a file',
  },
)
type Source = Static<typeof Source>

async function settings(names: Context['names'], source: Source) {
  const { escalationPolicy, routingRules, signed: _signed, ...rest } = source
  return {
    ...rest,
    escalationPolicyId: escalationPolicy === null ? null : await names.id('escalationPolicies', escalationPolicy),
    routingRules: await Promise.all(
      routingRules.map(async (rule) => ({
        match: rule.match,
        escalationPolicyId: await names.id('escalationPolicies', rule.escalationPolicy),
      })),
    ),
  }
}

/** Alert sources (webhook configs), without their keys and secrets. */
export const alertSources: Kind<Source> = {
  noun: 'alert source',
  file: 'alert-sources.yaml',
  key: 'alertSources',
  entry: Source,
  whole: ['routingRules'],
  identity: (source) => source.name,
  references: (source) => [
    ...(source.escalationPolicy === null
      ? []
      : [{ at: ['escalationPolicy'], to: 'escalationPolicies', name: source.escalationPolicy } satisfies Reference]),
    ...source.routingRules.map((rule, index): Reference => ({
      at: ['routingRules', index, 'escalationPolicy'],
      to: 'escalationPolicies',
      name: rule.escalationPolicy,
    })),
  ],

  async live({ connection: { api, orgId }, names }) {
    const data = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/webhooks', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the alert sources',
    )
    return Promise.all(
      data.map(async (row) => ({
        id: row.id,
        entry: {
          name: row.name,
          format: row.format,
          enabled: row.enabled,
          defaultPriority: row.defaultPriority,
          autoAnalysis: row.autoAnalysis,
          groupWindowSeconds: row.groupWindowSeconds,
          rateLimitPerMinute: row.rateLimitPerMinute,
          signed: row.signed,
          escalationPolicy: row.escalationPolicyId === null ? null : await names.name('escalationPolicies', row.escalationPolicyId),
          routingRules: await Promise.all(
            row.routingRules.map(async (rule) => ({
              match: rule.match,
              escalationPolicy: await names.name('escalationPolicies', rule.escalationPolicyId),
            })),
          ),
        },
      })),
    )
  },

  async create({ connection: { api, orgId }, names }, source) {
    const created = await answered(
      api.POST('/api/v1/organizations/{orgId}/webhooks', {
        params: { path: { orgId } },
        body: { ...(await settings(names, source)), ...(source.signed ? { signed: true } : {}) },
      }),
      `creating the alert source ${source.name}`,
    )
    return [
      `its API key (shown once): ${created.apiKey}; send alerts to ${created.ingestPath}`,
      ...(created.signingSecret ? [`its signing secret (shown once): ${created.signingSecret}`] : []),
    ]
  },

  async update({ connection: { api, orgId }, names }, live, source) {
    const signing =
      source.signed === undefined || source.signed === live.entry.signed
        ? {}
        : { signingSecret: source.signed ? randomBytes(32).toString('base64url') : null }
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/webhooks/{configId}', {
        params: { path: { orgId, configId: live.id } },
        body: { ...(await settings(names, source)), ...signing },
      }),
      `changing the alert source ${source.name}`,
    )
    return signing.signingSecret ? [`its new signing secret (shown once): ${signing.signingSecret}`] : []
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/webhooks/{configId}', { params: { path: { orgId, configId: live.id } } }),
      `deleting the alert source ${live.entry.name}`,
    )
  },
}
