import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Context, Kind, Reference } from '../kind.js'
import { Name, Priority } from './fields.js'

const Check = Type.Object(
  {
    name: Name,
    kind: Type.Enum(['http', 'multistep', 'browser', 'tcp', 'dns', 'tls', 'heartbeat']),
    request: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'As the API takes it for the kind (secrets by reference, never their values); a browser check’s `script` reads best as a YAML block (`script: |`)',
    }),
    frequencySeconds: Type.Integer({ minimum: 30 }),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
    degradedMs: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    regions: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
    retries: Type.Optional(Type.Integer({ minimum: 0 })),
    alertRule: Type.Optional(
      Type.Object(
        {
          failures: Type.Optional(Type.Integer({ minimum: 1 })),
          quorum: Type.Optional(Type.Enum(['any', 'majority', 'all'])),
          priority: Type.Optional(Priority),
          escalationPolicy: Type.Optional(
            Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'By name; null: unrouted' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    statusComponents: Type.Array(Type.String({ pattern: '^[^/]+/.+$' }), {
      default: [],
      description: 'Status page components that follow the check: `page slug/component name`',
    }),
    paused: Type.Optional(Type.Boolean()),
    service: Type.Optional(
      Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
        description: 'The service it belongs to: its failure is that service’s alert',
      }),
    ),
  },
  { additionalProperties: false, title: 'SyntheticCheck' },
)
type Check = Static<typeof Check>

async function settings(names: Context['names'], check: Check) {
  const { alertRule, statusComponents, ...rest } = check
  const { escalationPolicy, ...rule } = alertRule ?? {}
  return {
    ...rest,
    ...(alertRule
      ? {
          alertRule: {
            ...rule,
            ...(escalationPolicy === undefined
              ? {}
              : { escalationPolicyId: escalationPolicy === null ? null : await names.id('escalationPolicies', escalationPolicy) }),
          },
        }
      : {}),
    statusComponentIds: await Promise.all(statusComponents.map((component) => names.id('components', component))),
  }
}

/** Synthetic checks, with their alert rule's policy and the status components they hold by name. */
export const checks: Kind<Check> = {
  noun: 'check',
  file: 'checks.yaml',
  key: 'checks',
  entry: Check,
  identity: (check) => check.name,
  references: (check) => [
    ...(check.alertRule?.escalationPolicy
      ? [{ at: ['alertRule', 'escalationPolicy'], to: 'escalationPolicies', name: check.alertRule.escalationPolicy } satisfies Reference]
      : []),
    ...check.statusComponents.map((component, index): Reference => ({
      at: ['statusComponents', index],
      to: 'components',
      name: component,
    })),
  ],
  normal: (check) => ({ ...check, statusComponents: [...check.statusComponents].sort() }),

  async live({ connection: { api, orgId }, names }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/synthetics/organizations/{orgId}/checks', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the checks',
    )
    return Promise.all(
      rows.map(async (row) => ({
        id: row.id,
        entry: {
          name: row.name,
          kind: row.kind,
          request: row.request as Record<string, unknown>,
          frequencySeconds: row.frequencySeconds,
          timeoutMs: row.timeoutMs,
          degradedMs: row.degradedMs,
          regions: row.regions,
          retries: row.retries,
          alertRule: {
            failures: row.alertRule.failures,
            quorum: row.alertRule.quorum as 'any',
            priority: row.alertRule.priority,
            escalationPolicy:
              row.alertRule.escalationPolicyId === null ? null : await names.name('escalationPolicies', row.alertRule.escalationPolicyId),
          },
          statusComponents: (await Promise.all(row.statusComponentIds.map((id) => names.name('components', id)))).sort(),
          paused: row.paused,
          service: row.service,
        },
      })),
    )
  },

  async create({ connection: { api, orgId }, names }, check) {
    await answered(
      api.POST('/api/v1/synthetics/organizations/{orgId}/checks', {
        params: { path: { orgId } },
        body: (await settings(names, check)) as never,
      }),
      `creating the check ${check.name}`,
    )
  },

  async update({ connection: { api, orgId }, names }, live, check) {
    const { kind: _kind, ...changes } = await settings(names, check)
    await answered(
      api.PATCH('/api/v1/synthetics/organizations/{orgId}/checks/{checkId}', {
        params: { path: { orgId, checkId: live.id } },
        body: changes as never,
      }),
      `changing the check ${check.name}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/synthetics/organizations/{orgId}/checks/{checkId}', { params: { path: { orgId, checkId: live.id } } }),
      `deleting the check ${live.entry.name}`,
    )
  },
}
