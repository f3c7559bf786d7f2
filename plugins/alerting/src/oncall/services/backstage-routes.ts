import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { BadRequestError } from '@svc/http'
import { policyIdsByName } from '../policies/queries.js'
import { teamIdsByName } from '../teams/queries.js'
import { readCatalog, refName, type CatalogService } from './backstage.js'
import { dependsOnOf } from './edges.js'
import { insertService, serviceIdsByKey, servicesByKey, updateService, type ServiceFields } from './queries.js'
import { CreateService } from './schemas.js'
import { audited, checkService, dependOn, fieldsOf, lowerCased } from './writes.js'

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml']

const ImportResult = Type.Object(
  {
    created: Type.Array(Type.String(), { description: 'Keys of the services registered' }),
    updated: Type.Array(Type.String(), { description: 'Keys of the services changed' }),
    unchanged: Type.Array(Type.String()),
    warnings: Type.Array(Type.String(), {
      description: 'What was left out, and why: an owner no team answers to, a dependency on no service',
    }),
  },
  { title: 'BackstageImport' },
)

/** A team answering to an owner reference: `group:payments-team` finds “Payments team” or “payments-team”. */
function teamOf(teams: Map<string, string>, owner: string): string | undefined {
  const name = refName(owner)
  return teams.get(name) ?? teams.get(name.replaceAll(/[-_.]/g, ' '))
}

/**
 * The fields a catalog entry gives a service: what the entity states replaces, what it leaves out
 * is kept; tags, links and aliases are merged, so importing again changes nothing.
 */
function merged(
  before: ServiceFields | undefined,
  entry: CatalogService,
  ownerTeamId: string | undefined,
  policyId: string | undefined,
): ServiceFields {
  return {
    key: entry.key,
    name: entry.name,
    description: entry.description ?? before?.description ?? null,
    ownerTeamId: ownerTeamId ?? before?.ownerTeamId ?? null,
    escalationPolicyId: policyId ?? before?.escalationPolicyId ?? null,
    tier: entry.tier ?? before?.tier ?? null,
    tags: [...new Set([...(before?.tags ?? []), ...entry.tags])].slice(0, 20),
    links: { ...(before?.links ?? {}), ...entry.links },
    aliases: lowerCased([...(before?.aliases ?? []), ...entry.aliases]).filter((alias) => alias !== entry.key),
  }
}

/** The fields hold what the API itself would take (a title too long, a tag too long: 400 naming the entity). */
function checkShape(key: string, fields: ServiceFields) {
  const [first] = Value.Errors(CreateService, fields)
  if (first) throw new BadRequestError(`${key}: ${first.instancePath.slice(1) || 'service'} ${first.message}`)
}

const sameFields = (a: ServiceFields, b: ServiceFields) =>
  (Object.keys(a) as Array<keyof ServiceFields>).every((field) => JSON.stringify(a[field]) === JSON.stringify(b[field]))

/**
 * Backstage import (issue 55; docs/alerting.md, "Services"): the Components and Systems of a
 * catalog-info.yaml (several documents allowed) become services of the catalog, keyed by their
 * name, in one transaction; importing the same file again changes nothing. Alerting manager;
 * each service created or changed is audited.
 */
export const backstageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  // The descriptor is sent as it is written, YAML.
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string', bodyLimit: 1_048_576 }, (_request, body, done) => done(null, body))

  app.post(
    '/api/v1/organizations/:orgId/services/import/backstage',
    {
      schema: {
        tags: ['services'],
        summary: 'Import services from a Backstage catalog-info.yaml (alerting manager)',
        description:
          'Send the file as `application/yaml`. Component and System entities become services (key: `metadata.name`, name: `metadata.title`, `metadata.description`, `metadata.tags` with `lifecycle:` and `system:` tags, `metadata.links` by type or icon as runbook, dashboard, repository or chat, the repository also from `github.com/project-slug` or `backstage.io/source-location`); `spec.owner` finds the team of that name; `spec.dependsOn`, `spec.dependencyOf` and a system’s components become dependencies. Annotations `divinux.io/tier`, `divinux.io/escalation-policy` (a policy name) and `divinux.io/aliases` (comma-separated) fill the rest. What an entity states replaces a service’s field, tags, links and aliases are merged, other kinds are skipped; a second import of the same file changes nothing.',
        consumes: YAML_TYPES,
        params: Type.Object({ orgId: Type.String() }),
        body: Type.String({ maxLength: 1_048_576, description: 'catalog-info.yaml' }),
        response: { 200: ImportResult },
      },
      onRequest: app.requireProductRole('alerting', 'manager'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { services, skipped } = readCatalog(request.body)
      const warnings = skipped.map((entity) => `${entity}: only Component and System entities are imported`)
      const result = { created: [] as string[], updated: [] as string[], unchanged: [] as string[], warnings }
      await db.transaction().execute(async (trx) => {
        const [teams, policies, existing] = await Promise.all([
          teamIdsByName(trx, organizationId),
          policyIdsByName(trx, organizationId),
          servicesByKey(
            trx,
            organizationId,
            services.map((service) => service.key),
          ),
        ])
        const ids = new Map<string, string>()
        for (const entry of services) {
          const ownerTeamId = entry.owner ? teamOf(teams, entry.owner) : undefined
          if (entry.owner && !ownerTeamId) warnings.push(`${entry.key}: its owner ${entry.owner} is no team of the organization`)
          const policyId = entry.escalationPolicy ? policies.get(entry.escalationPolicy.toLowerCase()) : undefined
          if (entry.escalationPolicy && !policyId) warnings.push(`${entry.key}: no escalation policy is named ${entry.escalationPolicy}`)
          const before = existing.get(entry.key)
          const current = before && fieldsOf(before)
          const fields = merged(current, entry, ownerTeamId, policyId)
          if (before && current && sameFields(current, fields)) {
            ids.set(entry.key, before.id)
            continue
          }
          checkShape(entry.key, fields)
          await checkService(trx, organizationId, fields, before?.id)
          const row = before
            ? await updateService(trx, organizationId, before.id, fields)
            : await insertService(trx, organizationId, fields, request.user.userId)
          ids.set(entry.key, row.id)
          await recordAudit(trx, auditContextOf(request), {
            organizationId,
            product: 'alerting',
            entityType: 'service',
            entityId: row.id,
            action: before ? 'service.updated' : 'service.created',
            ...(current ? { before: audited(current, []) } : {}),
            after: { ...audited(fields, []), source: 'backstage' },
          })
          ;(before ? result.updated : result.created).push(entry.key)
        }
        await importDependencies(trx, organizationId, services, ids, request.user.userId, result)
        result.unchanged = services
          .map((service) => service.key)
          .filter((key) => !result.created.includes(key) && !result.updated.includes(key))
      })
      return result
    },
  )
}

/** Each entity that states its dependencies depends on exactly those that are services (the rest are warned of). */
async function importDependencies(
  db: Executor,
  organizationId: string,
  services: CatalogService[],
  ids: Map<string, string>,
  userId: string,
  result: { updated: string[]; created: string[]; warnings: string[] },
) {
  const stating = services.filter((service) => service.dependsOn !== undefined)
  const known = await serviceIdsByKey(db, organizationId, [...new Set(stating.flatMap((service) => service.dependsOn!))])
  const current = await dependsOnOf(db, organizationId, [...ids.values()])
  for (const service of stating) {
    const keys = service.dependsOn!.filter((key) => key !== service.key)
    for (const key of keys)
      if (!known.has(key)) result.warnings.push(`${service.key}: depends on ${key}, which is no service of the organization`)
    const wanted = keys.filter((key) => known.has(key)).sort()
    const id = ids.get(service.key)!
    if ((current.get(id) ?? []).join() === wanted.join()) continue
    await dependOn(db, organizationId, { id, key: service.key }, wanted, userId)
    if (!result.created.includes(service.key) && !result.updated.includes(service.key)) result.updated.push(service.key)
  }
}
