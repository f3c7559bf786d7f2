import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { dependencyNameEdges } from '../oncall/index.js'
import { incidentOrNotFound, summaryBody } from './common.js'
import { deploysIn, minutesBefore } from '../intake/index.js'
import { incidentFacets, nearbyIncidents } from './queries.js'
import { IncidentParams, RelatedIncident } from './schemas.js'

/** Incidents resolved this long ago are still worth naming as related. */
const RELATED_DAYS = 7
/** How many other incidents are looked at (the newest). */
const CANDIDATES = 100
/** A deploy this long before an incident's start may have caused it. */
const DEPLOY_HOURS = 2

type Reason = { kind: 'service' | 'dependency' | 'deploy' | 'label'; detail: Record<string, unknown> }

/**
 * `GET …/incidents/:id/related` (decision 0019): other incidents, open or resolved in the last
 * week, that share a service, a dependency between their services, a deploy before both, or a
 * label value with this one, each with its reasons. Best first: the most reasons, then the newest.
 */
export const relatedRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/incidents/:incidentId/related',
    {
      schema: {
        tags: ['incidents'],
        summary: 'Other open or recent incidents with a shared service, dependency, deploy or label, each with why (alerting viewer)',
        params: IncidentParams,
        response: { 200: Type.Object({ data: Type.Array(RelatedIncident) }) },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      const others = await nearbyIncidents(db, organizationId, incident.id, new Date(Date.now() - RELATED_DAYS * 86_400_000), CANDIDATES)
      if (others.length === 0) return { data: [] }
      const facets = await incidentFacets(db, organizationId, [incident.id, ...others.map((other) => other.id)])
      const servicesOf = (id: string) => new Set(facets.services.filter((row) => row.incidentId === id).map((row) => row.service))
      const labelsOf = (id: string) => new Set(facets.labels.filter((row) => row.incidentId === id).map((row) => `${row.key}=${row.value}`))
      const ours = servicesOf(incident.id)
      const ourLabels = labelsOf(incident.id)
      const edges = await dependencyNameEdges(db, organizationId)
      const dependents = (service: string) => edges.filter((edge) => edge.dependsOn === service).map((edge) => edge.service)
      // Deploys before this incident of its services and of what they depend on.
      const upstream = [...ours].flatMap((service) => [
        service,
        ...edges.filter((edge) => edge.service === service).map((edge) => edge.dependsOn),
      ])
      const deploys = await deploysIn(db, organizationId, {
        services: [...new Set(upstream)],
        ...minutesBefore(incident.startedAt, DEPLOY_HOURS * 60),
        limit: 100,
      })

      const related = others.flatMap((other) => {
        const theirs = servicesOf(other.id)
        const reasons: Reason[] = []
        for (const service of ours) if (theirs.has(service)) reasons.push({ kind: 'service', detail: { service } })
        for (const edge of edges) {
          if (ours.has(edge.service) && theirs.has(edge.dependsOn))
            reasons.push({ kind: 'dependency', detail: { service: edge.service, dependsOn: edge.dependsOn } })
          if (theirs.has(edge.service) && ours.has(edge.dependsOn))
            reasons.push({ kind: 'dependency', detail: { service: edge.service, dependsOn: edge.dependsOn } })
        }
        for (const deploy of deploys) {
          const affected = [deploy.service, ...dependents(deploy.service)]
          const after = other.startedAt.getTime() - deploy.deployedAt.getTime()
          if (after >= 0 && after <= DEPLOY_HOURS * 3_600_000 && affected.some((service) => theirs.has(service)))
            reasons.push({
              kind: 'deploy',
              detail: {
                deployId: deploy.id,
                service: deploy.service,
                version: deploy.version,
                deployedAt: deploy.deployedAt.toISOString(),
              },
            })
        }
        for (const pair of labelsOf(other.id)) {
          if (ourLabels.has(pair)) {
            const [key, ...value] = pair.split('=')
            reasons.push({ kind: 'label', detail: { [key!]: value.join('=') } })
          }
        }
        return reasons.length > 0 ? [{ incident: summaryBody(other), reasons }] : []
      })
      related.sort((a, b) => b.reasons.length - a.reasons.length || b.incident.createdAt.localeCompare(a.incident.createdAt))
      return { data: related }
    },
  )
}
