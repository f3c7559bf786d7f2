import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { pageOf, type Executor, type Page } from '@svc/db'
import { ListResponse, PaginationQuery } from '@svc/http'
import { OrgParams } from './schemas.js'

/** The synthetics surface's read of an organization's checks (wired in by the platform service). */
export type CheckLister = (
  db: Executor,
  organizationId: string,
  page: Page,
) => Promise<{
  rows: Array<{
    id: string
    name: string
    kind: string
    frequencySeconds: number
    regions: string[]
    paused: boolean
    state: string
    stateChangedAt: Date
    createdAt: Date
  }>
  total: number
}>

const CheckSummary = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: Type.String(),
    frequencySeconds: Type.Integer(),
    regions: Type.Array(Type.String()),
    paused: Type.Boolean(),
    state: Type.Enum(['unknown', 'passing', 'degraded', 'failing'] as const),
    stateChangedAt: Type.String({ format: 'date-time' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'CheckSummary' },
)

/**
 * `GET /organizations/:orgId/checks` (spec, Org Member): the organization's synthetic checks,
 * read through the synthetics surface's read module, not its tables.
 */
export const checkListRoutes: FastifyPluginAsyncTypebox<{ checks: CheckLister }> = async (app, { checks }) => {
  app.get(
    '/api/v1/organizations/:orgId/checks',
    {
      schema: {
        tags: ['organizations'],
        summary: 'List the organization’s synthetic checks (org member)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(CheckSummary) },
      },
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await checks(app.database.db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return {
        data: rows.map((row) => ({
          ...row,
          state: row.state as 'unknown',
          stateChangedAt: row.stateChangedAt.toISOString(),
          createdAt: row.createdAt.toISOString(),
        })),
        meta: { page, limit, total },
      }
    },
  )
}
