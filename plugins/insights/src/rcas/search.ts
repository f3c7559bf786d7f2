import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { ListResponse, PaginationQuery, Timestamp } from '@svc/http'
import { OrgParams, sourceProducts } from '../analyses/schemas.js'
import { searchIncidents } from '../queries/incident-search.js'
import { readableSources } from './readable.js'
import { linkKinds } from './schemas.js'
import { tags } from './routes.js'
import { pageOf } from '@svc/db'

const FoundIncident = Type.Object(
  {
    sourceProduct: Type.Enum(sourceProducts),
    kind: Type.Enum(linkKinds, {
      description: 'incident: an incident of alerting (INC-n); alert: one alert; status_incident: a status page incident',
    }),
    incidentId: Type.String({ format: 'uuid', description: 'What a link to it names' }),
    reference: Type.String({ description: 'How people name it: INC-n, the alert’s title, the status page incident’s name' }),
    title: Type.String(),
    priority: Type.String(),
    status: Type.String(),
    service: Type.Union([Type.String(), Type.Null()]),
    startedAt: Timestamp,
    resolvedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'FoundIncident' },
)

const SearchQuery = Type.Object({
  ...PaginationQuery.properties,
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Words in an incident’s title or summary, an alert’s title or description, or a status page incident’s name or updates',
    }),
  ),
  sourceProduct: Type.Optional(Type.Enum(sourceProducts, { description: 'Only this surface' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Began at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Began before' })),
})

/** Incidents of every surface, to link to an RCA: incidents of alerting (INC-n), alerts and status page incidents. */
export const incidentSearchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/rcas/search-incidents',
    {
      schema: {
        tags,
        summary:
          'Search incidents across surfaces by text and time (organization member; only the surfaces the caller may read: alerting viewer for incidents and alerts, statuspages viewer for status page incidents)',
        params: OrgParams,
        querystring: SearchQuery,
        response: { 200: ListResponse(FoundIncident) },
      },
      onRequest: app.requireOrgMember,
    },
    async (request) => {
      const { page, limit, ...filter } = request.query
      const readable = await readableSources(request)
      const { rows, total } = await searchIncidents(db, membershipOf(request).organizationId, filter, readable, {
        ...pageOf({ page, limit }),
      })
      return { data: rows, meta: { page, limit, total } }
    },
  )
}
