import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ExpiringLinkQuery, expiringLinkHolds, ForbiddenError } from '@svc/http'
import { screenshotById } from '../queries/screenshots.js'
import { tags } from '../schemas.js'
import { SCREENSHOT_PATH } from './screenshot-links.js'

/**
 * A browser check's screenshot through the signed link its result gave (public: the signature is
 * the credential, so an image opens in a browser or a chat preview). A link that does not hold,
 * or has expired, or whose run is gone past retention, is 403 alike: nothing tells them apart.
 */
export const screenshotRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db

  app.get(
    `${SCREENSHOT_PATH}/:screenshotId`,
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'A browser check’s screenshot, through the signed link of its result (no credentials)',
        params: Type.Object({ screenshotId: Type.String({ format: 'uuid' }) }),
        querystring: ExpiringLinkQuery,
        response: { 200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The PNG' }) },
      },
    },
    async (request, reply) => {
      const { screenshotId } = request.params
      const { expires, signature } = request.query
      const screenshot = await screenshotById(db, screenshotId)
      if (!screenshot || !expiringLinkHolds(screenshot.linkKey, screenshotId, { expires, signature }))
        throw new ForbiddenError('The screenshot link is invalid or has expired')
      return reply
        .header('content-type', 'image/png')
        .header('cache-control', `private, max-age=${Math.max(0, expires - Math.floor(Date.now() / 1000))}, immutable`)
        .header('x-content-type-options', 'nosniff')
        .send(screenshot.png)
    },
  )
}
