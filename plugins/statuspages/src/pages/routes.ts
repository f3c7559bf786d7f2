import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { trackProductEvent } from '@svc/analytics'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { BadRequestError, ConflictError, ListResponse, NullableString, PaginationQuery, invalidField } from '@svc/http'
import {
  deletePage,
  insertPage,
  listPages,
  markDomainVerified,
  assetsOfPages,
  takenBy,
  updatePage,
  type PageFields,
  type PageRow,
} from '../queries/pages.js'
import { endViewerSessionsOutside } from '../queries/viewers.js'
import { ThemeSchema, contrastProblem } from '../branding/theme.js'
import { DEFAULT_LOCALES, PageLocales } from '../i18n/locales.js'
import { EmailDomain, MANAGED_BASE, OrgParams, PageParams, StatusPage, lowerCasedDomains, pageBody, tags } from '../schemas.js'
import { auditEntry, pageOfRequest } from './access.js'
import { recordNameOf, type DomainChecker } from './custom-domains.js'
import { publicUrlOfRow } from './public-url.js'

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Slug = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$',
  description: 'Lower-case letters, digits and hyphens; the public page is /api/v1/statuspages/public/<slug>/',
})
const Domain = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  maxLength: 253,
  pattern: '^(?=.{1,253}$)(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$',
  description:
    'A host name (status.example.com) pointed at the product API; its Host header chooses the page once the domain is verified (POST …/custom-domain/verify)',
})
const TimeZone = Type.String({ minLength: 1, maxLength: 64, description: 'An IANA time zone, e.g. Europe/Berlin' })
const Visibility = Type.Enum(['public', 'private'] as const, {
  description:
    'private: read only by members of the organization (signed in to the platform) and by people of `viewerEmailDomains` through a link sent by e-mail; every public path of the page answers 404 to anyone else',
})
const EmailDomains = Type.Array(EmailDomain, {
  maxItems: 20,
  uniqueItems: true,
  description:
    'A private page: the e-mail domains (example.com) whose addresses may ask for a sign-in link; exact domains, no subdomains. Empty: members only',
})
const HeaderLinks = Type.Array(
  Type.Object(
    { label: Type.String({ minLength: 1, maxLength: 40, pattern: '\\S' }), url: Type.String({ maxLength: 2000 }) },
    { additionalProperties: false },
  ),
  { maxItems: 5, description: 'Links in the page’s header (your site, support, a contact page): http or https' },
)
const SupportUrl = NullableString({ maxLength: 2000, description: 'An http(s) URL shown on the public page' })

const fieldsSchema = {
  name: Name,
  slug: Slug,
  timeZone: Type.Optional(TimeZone),
  locales: Type.Optional(PageLocales),
  customDomain: Type.Optional(Domain),
  published: Type.Optional(Type.Boolean()),
  allowSubscribers: Type.Optional(Type.Boolean()),
  bannerFollowsChecks: Type.Optional(
    Type.Boolean({
      description:
        'Whether a component held by its synthetic checks alone colours the page’s overall status (banner, summary, widget, badge). Off by default: the component shows its checks’ state and the banner follows incidents, maintenances and statuses set by hand',
    }),
  ),
  supportUrl: Type.Optional(SupportUrl),
  visibility: Type.Optional(Visibility),
  viewerEmailDomains: Type.Optional(EmailDomains),
  theme: Type.Optional(ThemeSchema),
  headerLinks: Type.Optional(HeaderLinks),
  footerText: Type.Optional(
    NullableString({ maxLength: 500, description: 'Plain text at the foot of the page, the widget and subscribers’ e-mails' }),
  ),
}

/** Domains are matched lower-case; the same domain twice in other cases is one. */

const knownTimeZones = new Set(Intl.supportedValuesOf('timeZone'))

function checkFields(fields: Partial<PageFields>): void {
  if (fields.timeZone !== undefined && fields.timeZone !== 'UTC' && !knownTimeZones.has(fields.timeZone))
    throw invalidField('timeZone', 'must be an IANA time zone')
  if (fields.supportUrl && !/^https?:\/\/[^\s]+$/.test(fields.supportUrl)) throw invalidField('supportUrl', 'must be an http or https URL')
  const link = fields.headerLinks?.findIndex((entry) => !/^https?:\/\/[^\s]+$/.test(entry.url)) ?? -1
  if (link >= 0) throw invalidField(`headerLinks/${link}/url`, 'must be an http or https URL')
  const unreadable = fields.theme && contrastProblem(fields.theme)
  if (unreadable) throw invalidField('theme', unreadable)
}

const audited = (row: PageRow) => ({
  name: row.name,
  slug: row.slug,
  locales: row.locales,
  customDomain: row.customDomain,
  published: row.published,
  allowSubscribers: row.allowSubscribers,
  bannerFollowsChecks: row.bannerFollowsChecks,
  visibility: row.visibility,
  viewerEmailDomains: row.viewerEmailDomains,
  theme: row.theme,
  headerLinks: row.headerLinks,
  footerText: row.footerText,
})

/**
 * Status pages (issue 15): reading needs statuspages viewer, changing statuspages manager.
 * Slugs and verified custom domains are unique across organizations (they choose the public
 * page); a claimed domain is served only once verified (decision 0015, "Custom domains").
 */
export const pageRoutes: FastifyPluginAsyncTypebox<{
  productUrl: string
  changed: (pageId: string) => void
  checkDomain: DomainChecker
}> = async (app, options) => {
  const db = app.database.db
  const viewer = app.requireProductRole('statuspages', 'viewer')
  const manager = app.requireProductRole('statuspages', 'manager')
  /** The pages as the API answers them, with their assets' public URLs. */
  const bodies = async (rows: PageRow[]) => {
    const assets = await assetsOfPages(
      db,
      rows.map((row) => row.id),
    )
    return rows.map((row) => pageBody(row, publicUrlOfRow(options.productUrl, row), assets.get(row.id) ?? {}))
  }
  const body = async (row: PageRow) => (await bodies([row]))[0]!
  const refuseTaken = async (executor: Executor, fields: { slug?: string; customDomain?: string | null }, exceptPageId?: string) => {
    const taken = await takenBy(executor, fields, exceptPageId)
    if (taken.slug) throw new ConflictError(`slug: ${fields.slug} is taken by another status page`)
    if (taken.customDomain) throw new ConflictError(`customDomain: ${fields.customDomain} is taken by another status page`)
  }

  app.get(
    `${MANAGED_BASE}/pages`,
    {
      schema: {
        tags,
        summary: 'List status pages (statuspages viewer)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(StatusPage) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listPages(db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return { data: await bodies(rows), meta: { page, limit, total } }
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId`,
    {
      schema: { tags, summary: 'A status page (statuspages viewer)', params: PageParams, response: { 200: StatusPage } },
      onRequest: viewer,
    },
    async (request) => body(await pageOfRequest(db, request)),
  )

  app.post(
    `${MANAGED_BASE}/pages`,
    {
      schema: {
        tags,
        summary: 'Create a status page (statuspages manager); unpublished unless `published` says so',
        params: OrgParams,
        body: Type.Object(fieldsSchema, { additionalProperties: false }),
        response: { 201: StatusPage },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const fields: PageFields = {
        name: request.body.name.trim(),
        slug: request.body.slug,
        timeZone: request.body.timeZone ?? 'UTC',
        locales: request.body.locales ?? [...DEFAULT_LOCALES],
        customDomain: request.body.customDomain?.toLowerCase() ?? null,
        published: request.body.published ?? false,
        allowSubscribers: request.body.allowSubscribers ?? true,
        bannerFollowsChecks: request.body.bannerFollowsChecks ?? false,
        supportUrl: request.body.supportUrl ?? null,
        visibility: request.body.visibility ?? 'public',
        theme: request.body.theme ?? {},
        headerLinks: request.body.headerLinks ?? [],
        footerText: request.body.footerText?.trim() || null,
        viewerEmailDomains: lowerCasedDomains(request.body.viewerEmailDomains ?? []),
      }
      checkFields(fields)
      await refuseTaken(db, fields)
      const created = await db.transaction().execute(async (trx) => {
        const row = await insertPage(trx, organizationId, fields, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_page', row.id),
          action: 'status_page.created',
          after: audited(row),
        })
        if (row.published)
          await trackProductEvent(trx, {
            organizationId,
            name: 'Status Page Published',
            userId: request.user.userId,
            properties: { statusPageId: row.id },
          })
        return row
      })
      return reply.code(201).send(await body(created))
    },
  )

  app.patch(
    `${MANAGED_BASE}/pages/:pageId`,
    {
      schema: {
        tags,
        summary: 'Change a status page (statuspages manager)',
        params: PageParams,
        body: Type.Object(
          { ...fieldsSchema, name: Type.Optional(Name), slug: Type.Optional(Slug) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: StatusPage },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const fields: Partial<PageFields> = { ...request.body }
      if (fields.name !== undefined) fields.name = fields.name.trim()
      if (fields.customDomain) fields.customDomain = fields.customDomain.toLowerCase()
      if (fields.viewerEmailDomains) fields.viewerEmailDomains = lowerCasedDomains(fields.viewerEmailDomains)
      if (fields.footerText !== undefined) fields.footerText = fields.footerText?.trim() || null
      checkFields(fields)
      const updated = await db.transaction().execute(async (trx) => {
        const before = await pageOfRequest(trx, request, true)
        await refuseTaken(trx, { slug: fields.slug, customDomain: fields.customDomain }, before.id)
        const claimsDomain = fields.customDomain !== undefined && fields.customDomain !== before.customDomain
        const row = await updatePage(trx, organizationId, before.id, fields, claimsDomain)
        // Readers signed in by e-mail keep reading only while the page (private) or one of its audiences allows their domain.
        if (row.visibility !== before.visibility || fields.viewerEmailDomains !== undefined) await endViewerSessionsOutside(trx, row.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_page', row.id),
          action: 'status_page.updated',
          before: audited(before),
          after: audited(row),
        })
        if (row.published && !before.published)
          await trackProductEvent(trx, {
            organizationId,
            name: 'Status Page Published',
            userId: request.user.userId,
            properties: { statusPageId: row.id },
          })
        return row
      })
      options.changed(updated.id)
      return body(updated)
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/custom-domain/verify`,
    {
      schema: {
        tags,
        summary: 'Verify the page’s custom domain by its DNS TXT record (statuspages manager)',
        description:
          'Looks for the TXT record named in `customDomainVerification` (`_statuspage-verification.<domain>`) holding its value. Found: the page is served at the domain from now on. 409 when the record is not there yet (the answer says what was found) or another page holds the domain verified; 400 when the page has no custom domain.',
        params: PageParams,
        response: { 200: StatusPage },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const page = await pageOfRequest(db, request)
      const { customDomain: domain, customDomainToken: token } = page
      if (!domain || !token) throw new BadRequestError('the page has no custom domain to verify')
      const result = await options.checkDomain(domain, token)
      if (!result.found) throw new ConflictError(`${domain} is not verified: ${result.reason}`)
      const verified = await db.transaction().execute(async (trx) => {
        const current = await pageOfRequest(trx, request, true)
        // The domain may have changed while DNS was asked: the record proved the claim it was read for.
        if (current.customDomain !== domain || current.customDomainToken !== token)
          throw new ConflictError('the custom domain changed while it was being verified: verify again')
        if ((await takenBy(trx, { customDomain: domain }, page.id)).customDomain)
          throw new ConflictError(`customDomain: ${domain} is verified by another status page`)
        const row = await markDomainVerified(trx, organizationId, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_page', row.id),
          action: 'status_page.domain_verified',
          after: { customDomain: domain, record: recordNameOf(domain) },
        })
        return row
      })
      options.changed(verified.id)
      return body(verified)
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId`,
    {
      schema: {
        tags,
        summary: 'Delete a status page with everything on it (statuspages manager)',
        params: PageParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const page = await db.transaction().execute(async (trx) => {
        const row = await pageOfRequest(trx, request, true)
        await deletePage(trx, organizationId, row.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_page', row.id),
          action: 'status_page.deleted',
          before: audited(row),
        })
        return row
      })
      options.changed(page.id)
      return reply.code(204).send(null)
    },
  )
}
