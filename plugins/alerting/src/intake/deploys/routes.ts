import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { ListResponse } from '@svc/http'
import { listDeployEvents } from './queries.js'
import { DeployEvent, DeployQuery, deployBody } from './schemas.js'
import { pageOf } from '@svc/db'

/** Deploy events of an organization, newest first (alerting viewer). */
export const deployEventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/deploy-events',
    {
      schema: {
        tags: ['deploy events'],
        summary: 'List deploy events (alerting viewer): filter by service, environment, status, time',
        params: Type.Object({ orgId: Type.String() }),
        querystring: DeployQuery,
        response: { 200: ListResponse(DeployEvent) },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => {
      const { page, limit, ...filter } = request.query
      const { rows, total } = await listDeployEvents(db, membershipOf(request).organizationId, filter, {
        ...pageOf({ page, limit }),
      })
      return { data: rows.map(deployBody), meta: { page, limit, total } }
    },
  )
}
