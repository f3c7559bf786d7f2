import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { emailsOf, listActionItems, listLinks } from '../queries/rcas.js'
import { rcaMarkdown } from './markdown.js'
import { readableSources } from './readable.js'
import { rcaOf, tags } from './routes.js'
import { RcaParams } from './schemas.js'

/** `GET …/rcas/:rcaId/export?format=markdown`: the document as Markdown (organization member). */
export const rcaExportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/rcas/:rcaId/export',
    {
      schema: {
        tags,
        summary: 'Export an RCA as Markdown (organization member)',
        params: RcaParams,
        querystring: Type.Object({ format: Type.Enum(['markdown'] as const, { default: 'markdown' }) }),
        produces: ['text/markdown'],
        response: { 200: Type.String({ description: 'text/markdown; charset=utf-8' }) },
      },
      onRequest: app.requireOrgMember,
    },
    async (request, reply) => {
      const rca = await rcaOf(db, request, request.params.rcaId)
      const [links, items] = await Promise.all([
        listLinks(db, rca.organizationId, rca.id),
        listActionItems(db, rca.organizationId, rca.id, {}),
      ])
      const assignees = await emailsOf(db, [...new Set(items.flatMap((item) => (item.assigneeUserId ? [item.assigneeUserId] : [])))])
      const slug =
        rca.title
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-|-$/g, '')
          .slice(0, 60) || 'rca'
      return reply
        .type('text/markdown; charset=utf-8')
        .header('content-disposition', `attachment; filename="${slug}.md"`)
        .send(rcaMarkdown(rca, links, items, assignees, await readableSources(request)))
    },
  )
}
