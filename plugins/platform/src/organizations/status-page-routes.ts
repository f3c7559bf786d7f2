import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { pageOf, type Executor, type Page } from '@svc/db'
import { ListResponse, PaginationQuery } from '@svc/http'
import { OrgParams } from './schemas.js'

/** The status page surface's read of an organization's pages (wired in by the platform service). */
export type StatusPageLister = (
  db: Executor,
  organizationId: string,
  page: Page,
) => Promise<{
  rows: Array<{
    id: string
    name: string
    slug: string
    customDomain: string | null
    published: boolean
    publicUrl: string
    createdAt: Date
    updatedAt: Date
  }>
  total: number
}>

const StatusPageSummary = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    slug: Type.String(),
    customDomain: Type.Union([Type.String(), Type.Null()]),
    published: Type.Boolean(),
    publicUrl: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'StatusPageSummary' },
)

/**
 * `GET /organizations/:orgId/status-pages` (spec, Org Member): the organization's status pages,
 * read through the status page surface's read module, not its tables.
 */
export const statusPageListRoutes: FastifyPluginAsyncTypebox<{ statusPages: StatusPageLister }> = async (app, { statusPages }) => {
  app.get(
    '/api/v1/organizations/:orgId/status-pages',
    {
      schema: {
        tags: ['organizations'],
        summary: 'List the organization’s status pages (org member)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(StatusPageSummary) },
      },
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await statusPages(app.database.db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return {
        data: rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() })),
        meta: { page, limit, total },
      }
    },
  )
}
