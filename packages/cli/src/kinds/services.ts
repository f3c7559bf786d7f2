import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Context, Kind, Live, Reference } from '../kind.js'
import { NullableName, NullableText } from './fields.js'

const Key = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$', description: 'The service’s stable slug' })
const Url = Type.String({ pattern: '^https?://\\S+$' })
export const Service = Type.Object(
  {
    key: Key,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Default: the key' })),
    description: NullableText(2000),
    ownerTeam: NullableName('The team that owns it, by name'),
    escalationPolicy: NullableName('Whom its alerts page when their source names no policy, by name'),
    tier: Type.Union([Type.Integer({ minimum: 1, maximum: 4 }), Type.Null()], { default: null }),
    tags: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    links: Type.Object(
      {
        runbook: Type.Optional(Url),
        dashboard: Type.Optional(Url),
        repository: Type.Optional(Url),
        chat: Type.Optional(Type.String({ minLength: 1 })),
      },
      { additionalProperties: false, default: {} },
    ),
    aliases: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Other names its alerts carry' }),
    dependsOn: Type.Array(Key, { default: [], description: 'The keys of the services it depends on' }),
  },
  { additionalProperties: false, title: 'Service' },
)
export type Service = Static<typeof Service>

const lower = (names: string[]) => names.map((name) => name.toLowerCase())

async function fields(names: Context['names'], service: Service) {
  return {
    key: service.key.toLowerCase(),
    name: service.name ?? service.key.toLowerCase(),
    description: service.description,
    ownerTeamId: service.ownerTeam === null ? null : await names.id('teams', service.ownerTeam),
    escalationPolicyId: service.escalationPolicy === null ? null : await names.id('escalationPolicies', service.escalationPolicy),
    tier: service.tier,
    tags: service.tags,
    links: service.links,
    aliases: lower(service.aliases),
  }
}

/** The service catalog: key, owner team, policy, tier, tags, links, aliases, and what each depends on (by key). */
export const services: Kind<Service> = {
  noun: 'service',
  file: 'services.yaml',
  key: 'services',
  entry: Service,
  names: 'services',
  whole: ['links'],
  identity: (service) => service.key.toLowerCase(),
  normal: (service) => ({
    ...service,
    key: service.key.toLowerCase(),
    name: service.name ?? service.key.toLowerCase(),
    aliases: lower(service.aliases),
    dependsOn: lower(service.dependsOn).sort(),
  }),
  references: (service) => [
    ...(service.ownerTeam === null ? [] : [{ at: ['ownerTeam'], to: 'teams', name: service.ownerTeam } satisfies Reference]),
    ...(service.escalationPolicy === null
      ? []
      : [{ at: ['escalationPolicy'], to: 'escalationPolicies', name: service.escalationPolicy } satisfies Reference]),
    ...service.dependsOn.map((key, index): Reference => ({ at: ['dependsOn', index], to: 'services', name: key.toLowerCase() })),
  ],

  async live({ connection: { api, orgId }, names }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/services', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the services',
    )
    return Promise.all(
      rows.map(async (row) => ({
        id: row.id,
        entry: {
          key: row.key,
          name: row.name,
          description: row.description,
          ownerTeam: row.ownerTeamId === null ? null : await names.name('teams', row.ownerTeamId),
          escalationPolicy: row.escalationPolicyId === null ? null : await names.name('escalationPolicies', row.escalationPolicyId),
          tier: row.tier,
          tags: row.tags,
          links: row.links,
          aliases: row.aliases,
          dependsOn: row.dependsOn,
        },
      })),
    )
  },

  // Created and changed without their dependencies, which may name services of the same apply not
  // created yet; `settle` sets those once every service exists.
  async create({ connection: { api, orgId }, names }, service) {
    await answered(
      api.POST('/api/v1/organizations/{orgId}/services', { params: { path: { orgId } }, body: await fields(names, service) }),
      `creating the service ${service.key}`,
    )
  },

  async update({ connection: { api, orgId }, names }, live, service) {
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/services/{serviceId}', {
        params: { path: { orgId, serviceId: live.id } },
        body: await fields(names, service),
      }),
      `changing the service ${service.key}`,
    )
  },

  async settle({ connection: { api, orgId }, names }, entries, live: Array<Live<Service>>) {
    const had = new Map(live.map((service) => [service.entry.key, service.entry.dependsOn]))
    for (const service of entries) {
      const dependsOn = lower(service.dependsOn).sort()
      const key = service.key.toLowerCase()
      if ((had.get(key) ?? []).join() === dependsOn.join()) continue
      await answered(
        api.PATCH('/api/v1/organizations/{orgId}/services/{serviceId}', {
          params: { path: { orgId, serviceId: await names.id('services', key) } },
          body: { dependsOn },
        }),
        `setting what the service ${key} depends on`,
      )
    }
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/services/{serviceId}', { params: { path: { orgId, serviceId: live.id } } }),
      `deleting the service ${live.entry.key}`,
    )
  },
}
