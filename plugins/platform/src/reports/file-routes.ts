import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ExpiringLinkQuery, ForbiddenError, NotFoundError, ReportsDisabledError } from '@svc/http'
import { reportFile } from '../queries/reports.js'
import { verifyDownload } from './signing.js'

export const reportSigningDisabled = () => new ReportsDisabledError('Report downloads are off: REPORTS_SIGNING_KEY is not set')

/**
 * The file behind a signed download link (public: the signature is the credential). A link
 * whose signature does not match, or whose time has passed, is 403 before anything is read.
 */
export const reportFileRoutes: FastifyPluginAsyncTypebox<{ signingKey?: string }> = async (app, { signingKey }) => {
  app.get(
    '/api/v1/reports/:reportId/file',
    {
      config: { public: true },
      schema: {
        tags: ['reports'],
        summary: 'A report’s file, through the signed link `download` gave (no credentials)',
        params: Type.Object({ reportId: Type.String({ format: 'uuid' }) }),
        querystring: ExpiringLinkQuery,
        response: { 200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The PDF or CSV file' }) },
      },
    },
    async (request, reply) => {
      if (!signingKey) throw reportSigningDisabled()
      const { reportId } = request.params
      if (!verifyDownload(signingKey, reportId, request.query.expires, request.query.signature))
        throw new ForbiddenError('The download link is invalid or has expired')
      const file = await reportFile(app.database.db, reportId)
      if (!file) throw new NotFoundError('Report')
      return reply
        .header('content-type', file.contentType ?? 'application/octet-stream')
        .header('content-disposition', `attachment; filename="${file.fileName ?? `${reportId}.bin`}"`)
        .header('cache-control', 'private, no-store')
        .send(file.content)
    },
  )
}
