import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, PaginationQuery, Timestamp } from '@svc/http'
import { auditEntry, pageOfRequest } from '../pages/access.js'
import { publicUrlOfRow } from '../pages/public-url.js'
import {
  audienceTags,
  deleteAudience,
  findAudience,
  insertAudience,
  listAudiences,
  updateAudience,
  type AudienceRow,
} from '../queries/audiences.js'
import { touchPage } from '../queries/pages.js'
import { endViewerSessionsOutside } from '../queries/viewers.js'
import { EmailDomain, MANAGED_BASE, PageParams, lowerCasedDomains, sliced, tags } from '../schemas.js'
import { tokenHash } from '../subscribers/subscribe.js'

const AudienceParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), audienceId: Type.String() })
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Unique on the page: a customer, a region, a team' })
const EmailDomains = Type.Array(EmailDomain, {
  maxItems: 20,
  uniqueItems: true,
  description:
    'Addresses of these domains (example.com; exact, no subdomains) may ask for a sign-in link and read as the audience. Empty: the audience is reached by its link only',
})
const Audience = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    pageId: Type.String({ format: 'uuid' }),
    name: Type.String(),
    emailDomains: Type.Array(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'StatusAudience' },
)
const AudienceWithLink = Type.Object(
  {
    ...Audience.properties,
    link: Type.String({
      description: 'The audience’s own link, shown once: whoever follows it reads the page as the audience. A new link voids it',
    }),
  },
  { title: 'StatusAudienceWithLink' },
)

const audienceBody = (row: AudienceRow) => ({
  id: row.id,
  pageId: row.pageId,
  name: row.name,
  emailDomains: row.emailDomains,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})
const audited = (row: AudienceRow) => ({ name: row.name, emailDomains: row.emailDomains })
const newToken = () => randomBytes(32).toString('base64url')

/**
 * A page's audiences (issue 58; decision 0015, "Audiences"): groups of readers (each enterprise
 * customer, say) who see, beside what everyone sees, the components and incidents tagged for them.
 * Each is reached through its own link (its token's hash is kept; the link is shown when made) or
 * by signing in with an address of one of its e-mail domains. Reading needs statuspages viewer,
 * changing statuspages manager.
 */
export const audienceRoutes: FastifyPluginAsyncTypebox<{ productUrl: string; changed: (pageId: string) => void }> = async (
  app,
  options,
) => {
  const db = app.database.db
  const viewer = app.requireProductRole('statuspages', 'viewer')
  const manager = app.requireProductRole('statuspages', 'manager')
  const audienceOf = async (executor: Executor, organizationId: string, pageId: string, id: string) => {
    const row = isUuid(id) ? await findAudience(executor, organizationId, pageId, id) : undefined
    if (!row) throw new NotFoundError('audience')
    return row
  }
  const linkOf = (page: Parameters<typeof publicUrlOfRow>[1], token: string) =>
    `${publicUrlOfRow(options.productUrl, page)}audience?token=${token}`

  app.get(
    `${MANAGED_BASE}/pages/:pageId/audiences`,
    {
      schema: {
        tags,
        summary: 'A page’s audiences (statuspages viewer)',
        params: PageParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(Audience) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return sliced((await listAudiences(db, page.organizationId, page.id)).map(audienceBody), request.query)
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/audiences/:audienceId`,
    {
      schema: { tags, summary: 'An audience (statuspages viewer)', params: AudienceParams, response: { 200: Audience } },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return audienceBody(await audienceOf(db, page.organizationId, page.id, request.params.audienceId))
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/audiences`,
    {
      schema: {
        tags,
        summary: 'Add an audience; the answer holds its link, shown once (statuspages manager)',
        params: PageParams,
        body: Type.Object({ name: Name, emailDomains: Type.Optional(EmailDomains) }, { additionalProperties: false }),
        response: { 201: AudienceWithLink },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const token = newToken()
      const { row, link } = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await insertAudience(trx, {
          organizationId,
          pageId: page.id,
          name: request.body.name.trim(),
          emailDomains: lowerCasedDomains(request.body.emailDomains ?? []),
          linkTokenHash: tokenHash(token),
        })
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_audience', row.id),
          action: 'status_audience.created',
          after: audited(row),
        })
        return { row, link: linkOf(page, token) }
      })
      options.changed(row.pageId)
      return reply.code(201).send({ ...audienceBody(row), link })
    },
  )

  app.patch(
    `${MANAGED_BASE}/pages/:pageId/audiences/:audienceId`,
    {
      schema: {
        tags,
        summary: 'Rename an audience or change its e-mail domains (statuspages manager)',
        params: AudienceParams,
        body: Type.Object(
          { name: Type.Optional(Name), emailDomains: Type.Optional(EmailDomains) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Audience },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const row = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const before = await audienceOf(trx, organizationId, page.id, request.params.audienceId)
        const { name, emailDomains } = request.body
        const row = await updateAudience(trx, before.id, {
          ...(name !== undefined ? { name: name.trim() } : {}),
          ...(emailDomains !== undefined ? { emailDomains: lowerCasedDomains(emailDomains) } : {}),
        })
        // A reader signed in by e-mail keeps reading only while a domain of the page allows them.
        if (emailDomains !== undefined) await endViewerSessionsOutside(trx, page.id)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_audience', row.id),
          action: 'status_audience.updated',
          before: audited(before),
          after: audited(row),
        })
        return row
      })
      options.changed(row.pageId)
      return audienceBody(row)
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/audiences/:audienceId/link`,
    {
      schema: {
        tags,
        summary: 'A new link for an audience; the old one, and every browser that followed it, stops reading as it (statuspages manager)',
        params: AudienceParams,
        response: { 200: AudienceWithLink },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const token = newToken()
      const { row, link } = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const before = await audienceOf(trx, organizationId, page.id, request.params.audienceId)
        const row = await updateAudience(trx, before.id, { linkTokenHash: tokenHash(token) })
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_audience', row.id),
          action: 'status_audience.link_renewed',
        })
        return { row, link: linkOf(page, token) }
      })
      options.changed(row.pageId)
      return { ...audienceBody(row), link }
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId/audiences/:audienceId`,
    {
      schema: {
        tags,
        summary: 'Remove an audience that tags nothing any more (statuspages manager)',
        description:
          'Refused (409) while components or incidents are tagged for it: untagged, they would be shown to everyone. Its subscribers stay, told from then on what everyone is told.',
        params: AudienceParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const pageId = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await audienceOf(trx, organizationId, page.id, request.params.audienceId)
        const tagged = await audienceTags(trx, page.id, row.id)
        if (tagged.components > 0 || tagged.incidents > 0)
          throw new ConflictError(
            `audience: ${tagged.components} components and ${tagged.incidents} incidents or maintenances are tagged for it; tag them for another audience first`,
          )
        await deleteAudience(trx, page.id, row.id)
        await endViewerSessionsOutside(trx, page.id)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_audience', row.id),
          action: 'status_audience.deleted',
          before: audited(row),
        })
        return page.id
      })
      options.changed(pageId)
      return reply.code(204).send(null)
    },
  )
}
