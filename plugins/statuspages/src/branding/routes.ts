import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { BadRequestError, NotFoundError, invalidField } from '@svc/http'
import { auditEntry, pageOfRequest } from '../pages/access.js'
import { publicUrlOfRow } from '../pages/public-url.js'
import { deleteAsset, putAsset } from '../queries/assets.js'
import { touchPage } from '../queries/pages.js'
import { MANAGED_BASE, tags } from '../schemas.js'
import { ASSET_RULES, UPLOAD_TYPES, assetFileName, assetKinds, checkAsset } from './assets.js'

const AssetParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), kind: Type.Enum(assetKinds) })
const BrandingAsset = Type.Object(
  {
    kind: Type.Enum(assetKinds),
    url: Type.String({ description: 'Where the public page serves it, named by its hash (cached for ever)' }),
    contentType: Type.String(),
    width: Type.Integer(),
    height: Type.Integer(),
    sha256: Type.String(),
  },
  { title: 'BrandingAsset' },
)
/** The largest upload any kind allows; each kind's own limit is checked on the bytes. */
const BODY_LIMIT = Math.max(...Object.values(ASSET_RULES).map((rules) => rules.maxBytes)) + 1024

/**
 * A page's logo and favicon (issue 58; decision 0015, "Branding"): `PUT` the image's bytes as the
 * request body, `DELETE` to remove it (statuspages manager). What the bytes are is read from them,
 * not from the Content-Type; SVG is refused.
 */
export const brandingRoutes: FastifyPluginAsyncTypebox<{ productUrl: string; changed: (pageId: string) => void }> = async (
  app,
  options,
) => {
  const db = app.database.db
  const manager = app.requireProductRole('statuspages', 'manager')
  app.addContentTypeParser(UPLOAD_TYPES, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body))

  app.put(
    `${MANAGED_BASE}/pages/:pageId/branding/:kind`,
    {
      schema: {
        tags,
        summary: 'Upload the page’s logo or favicon (statuspages manager)',
        description: Object.entries(ASSET_RULES)
          .map(
            ([kind, rules]) =>
              `${kind}: ${Object.keys(rules.types).join(', ')}, at most ${rules.maxBytes / 1024} KB and ${rules.maxSide} px a side`,
          )
          .join('; '),
        params: AssetParams,
        consumes: UPLOAD_TYPES,
        body: Type.Unsafe<Buffer>({ description: 'The image’s bytes' }),
        response: { 200: BrandingAsset },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { kind } = request.params
      if (!Buffer.isBuffer(request.body))
        throw new BadRequestError(`send the image as the body, with Content-Type one of ${UPLOAD_TYPES.join(', ')}`)
      const checked = checkAsset(kind, request.body)
      if ('refused' in checked) throw invalidField(kind, checked.refused)
      const page = await db.transaction().execute(async (trx) => {
        const row = await pageOfRequest(trx, request, true)
        await putAsset(trx, { id: row.id, organizationId }, kind, checked, request.body as Buffer)
        await touchPage(trx, row.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_page', row.id),
          action: `status_page.${kind}_uploaded`,
          after: { contentType: checked.contentType, sha256: checked.sha256, width: checked.width, height: checked.height },
        })
        return row
      })
      options.changed(page.id)
      return {
        kind,
        url: `${publicUrlOfRow(options.productUrl, page)}assets/${assetFileName(checked)}`,
        contentType: checked.contentType,
        width: checked.width,
        height: checked.height,
        sha256: checked.sha256,
      }
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId/branding/:kind`,
    {
      schema: {
        tags,
        summary: 'Remove the page’s logo or favicon (statuspages manager)',
        params: AssetParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const pageId = await db.transaction().execute(async (trx) => {
        const row = await pageOfRequest(trx, request, true)
        if (!(await deleteAsset(trx, row.id, request.params.kind))) throw new NotFoundError(request.params.kind)
        await touchPage(trx, row.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_page', row.id),
          action: `status_page.${request.params.kind}_removed`,
        })
        return row.id
      })
      options.changed(pageId)
      return reply.code(204).send(null)
    },
  )
}
