import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { Executor, Page } from '@svc/db'
import { jsonb, paged } from '@svc/db'
import type { Theme } from '../branding/theme.js'

const pageColumns = [
  'id',
  'organizationId',
  'name',
  'slug',
  'timeZone',
  'locales',
  'customDomain',
  'customDomainToken',
  'customDomainClaimedAt',
  'customDomainVerifiedAt',
  'customDomainCheckedAt',
  'customDomainFailingSince',
  'published',
  'allowSubscribers',
  'bannerFollowsChecks',
  'supportUrl',
  'visibility',
  'viewerEmailDomains',
  'theme',
  'headerLinks',
  'footerText',
  'revision',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

export interface PageFields {
  name: string
  slug: string
  timeZone: string
  /** Its languages, the default first (decision 0027). */
  locales: string[]
  customDomain: string | null
  published: boolean
  allowSubscribers: boolean
  bannerFollowsChecks: boolean
  supportUrl: string | null
  /** `private`: members and readers of `viewerEmailDomains` only (decision 0015, "Private pages"). */
  visibility: 'public' | 'private'
  viewerEmailDomains: string[]
  /** Branding (decision 0015, "Branding"): colours of declared CSS variables, header links, footer text. */
  theme: Theme
  headerLinks: HeaderLink[]
  footerText: string | null
}

export interface HeaderLink {
  label: string
  url: string
}

export async function listPages(db: Executor, organizationId: string, page: Page) {
  return paged(
    db.selectFrom('divinux.statusPages').where('organizationId', '=', organizationId),
    (rows) => rows.select(pageColumns).orderBy('createdAt').orderBy('id'),
    page,
  )
}

export async function findPage(db: Executor, organizationId: string, pageId: string, forUpdate = false) {
  let query = db.selectFrom('divinux.statusPages').select(pageColumns).where('organizationId', '=', organizationId).where('id', '=', pageId)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

export type PageRow = NonNullable<Awaited<ReturnType<typeof findPage>>>

/**
 * What a claim of a custom domain writes: the token its TXT record must hold, unverified; no
 * domain clears the claim. Decision 0015, "Custom domains".
 */
export function domainClaim(customDomain: string | null) {
  return {
    customDomain,
    customDomainToken: customDomain ? randomBytes(18).toString('base64url') : null,
    customDomainClaimedAt: customDomain ? sql<Date>`now()` : null,
    customDomainVerifiedAt: null,
    customDomainCheckedAt: null,
    customDomainFailingSince: null,
  }
}

export async function insertPage(db: Executor, organizationId: string, fields: PageFields, createdBy: string) {
  return db
    .insertInto('divinux.statusPages')
    .values({
      organizationId,
      ...fields,
      theme: jsonb(fields.theme),
      headerLinks: jsonb(fields.headerLinks),
      ...domainClaim(fields.customDomain),
      createdBy,
    })
    .returning(pageColumns)
    .executeTakeFirstOrThrow()
}

/** Changes a page; a new custom domain (`claimsDomain`) starts a new, unverified claim. */
export async function updatePage(db: Executor, organizationId: string, pageId: string, fields: Partial<PageFields>, claimsDomain = false) {
  const { customDomain, theme, headerLinks, ...rest } = fields
  return db
    .updateTable('divinux.statusPages')
    .set({
      ...rest,
      ...(theme !== undefined ? { theme: jsonb(theme) } : {}),
      ...(headerLinks !== undefined ? { headerLinks: jsonb(headerLinks) } : {}),
      ...(claimsDomain && customDomain !== undefined ? domainClaim(customDomain) : {}),
      revision: sql<number>`revision + 1`,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', pageId)
    .returning(pageColumns)
    .executeTakeFirstOrThrow()
}

export async function deletePage(db: Executor, organizationId: string, pageId: string): Promise<void> {
  await db.deleteFrom('divinux.statusPages').where('organizationId', '=', organizationId).where('id', '=', pageId).execute()
}

/** Which of a slug and a custom domain another page has taken already (a domain: verified there). */
export async function takenBy(db: Executor, fields: { slug?: string; customDomain?: string | null }, exceptPageId?: string) {
  const rows = await db
    .selectFrom('divinux.statusPages')
    .select(['slug', 'customDomain', 'customDomainVerifiedAt'])
    .where((eb) =>
      eb.or([
        ...(fields.slug ? [eb('slug', '=', fields.slug)] : []),
        ...(fields.customDomain
          ? [eb.and([eb('customDomain', '=', fields.customDomain), eb('customDomainVerifiedAt', 'is not', null)])]
          : []),
      ]),
    )
    .$if(exceptPageId !== undefined, (query) => query.where('id', '<>', exceptPageId ?? ''))
    .execute()
  return {
    slug: rows.some((row) => fields.slug !== undefined && row.slug === fields.slug),
    customDomain: rows.some(
      (row) => fields.customDomain != null && row.customDomain === fields.customDomain && row.customDomainVerifiedAt !== null,
    ),
  }
}

/**
 * Anything a public document shows changed: the page's revision grows, so every replica's cached
 * documents of it are stale (see public/cache.ts).
 */
export async function touchPage(db: Executor, pageId: string): Promise<void> {
  await db
    .updateTable('divinux.statusPages')
    .set({ revision: sql<number>`revision + 1`, updatedAt: sql<Date>`now()` })
    .where('id', '=', pageId)
    .execute()
}

/** What a public request needs of each of a page's audiences (decision 0015, "Audiences"). */
export interface PageAudience {
  id: string
  /** The domains whose addresses sign in as the audience. */
  emailDomains: string[]
  /** The hash of its link's token: a reader holding the token reads as the audience. */
  linkTokenHash: string
}

/** A page's asset as `<sha256>|<content type>`, or null (public documents name it by its hash). */
const assetOf = (kind: 'logo' | 'favicon') =>
  sql<
    string | null
  >`(select a.sha256 || '|' || a.content_type from divinux.status_page_assets a where a.page_id = divinux.status_pages.id and a.kind = ${kind})`

/** Each page's assets, by page id and kind. */
export async function assetsOfPages(db: Executor, pageIds: string[]) {
  const found = new Map<string, { logo?: { sha256: string; contentType: string }; favicon?: { sha256: string; contentType: string } }>()
  if (pageIds.length === 0) return found
  const rows = await db
    .selectFrom('divinux.statusPageAssets')
    .select(['pageId', 'kind', 'sha256', 'contentType'])
    .where('pageId', 'in', pageIds)
    .execute()
  for (const row of rows) {
    const assets = found.get(row.pageId) ?? {}
    assets[row.kind as 'logo' | 'favicon'] = { sha256: row.sha256, contentType: row.contentType }
    found.set(row.pageId, assets)
  }
  return found
}

/** A page's custom domain as links may name it: only once verified. */
const verifiedDomain = sql<string | null>`case when custom_domain_verified_at is not null then custom_domain end`

/**
 * The published page with this slug or custom domain, as the public documents read it. A custom
 * domain answers only once its owner proved control of it (decision 0015, "Custom domains").
 */
export async function publishedPageBy(db: Executor, by: 'slug' | 'customDomain', value: string) {
  return db
    .selectFrom('divinux.statusPages')
    .select([
      'id',
      'organizationId',
      'name',
      'slug',
      'timeZone',
      'locales',
      'allowSubscribers',
      'bannerFollowsChecks',
      'supportUrl',
      'visibility',
      'viewerEmailDomains',
      'theme',
      'headerLinks',
      'footerText',
      'revision',
      'updatedAt',
    ])
    .select(verifiedDomain.as('customDomain'))
    .select([assetOf('logo').as('logo'), assetOf('favicon').as('favicon')])
    .select(
      sql<
        PageAudience[]
      >`(select coalesce(json_agg(json_build_object('id', a.id, 'emailDomains', a.email_domains, 'linkTokenHash', a.link_token_hash) order by a.id), '[]') from divinux.status_audiences a where a.page_id = divinux.status_pages.id)`.as(
        'audiences',
      ),
    )
    .where(by, '=', value)
    .$if(by === 'customDomain', (query) => query.where('customDomainVerifiedAt', 'is not', null))
    .where('published', '=', true)
    .executeTakeFirst()
}

/** Marks the page's claim verified; a page of another organization holding it verified is a unique violation (409). */
export async function markDomainVerified(db: Executor, organizationId: string, pageId: string) {
  return db
    .updateTable('divinux.statusPages')
    .set({
      customDomainVerifiedAt: sql<Date>`coalesce(custom_domain_verified_at, now())`,
      customDomainCheckedAt: sql<Date>`now()`,
      customDomainFailingSince: null,
      revision: sql<number>`revision + 1`,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', pageId)
    .returning(pageColumns)
    .executeTakeFirstOrThrow()
}

/** Verified domains not checked since `before`, oldest check first. */
export async function domainsToRecheck(db: Executor, before: Date, limit: number) {
  return db
    .selectFrom('divinux.statusPages')
    .select(['id', 'customDomain', 'customDomainToken', 'customDomainFailingSince'])
    .where('customDomainVerifiedAt', 'is not', null)
    .where('customDomainCheckedAt', '<', before)
    .orderBy('customDomainCheckedAt')
    .limit(limit)
    .execute()
}

/**
 * Records a periodic check of a verified domain: found, it is fine again; missing, it is failing
 * since the first miss, and a domain failing since before `revokeBefore` is no longer verified.
 * A revoked domain is a pending claim again from now (its owner has a week to restore the record
 * before the claim ends), and the page's revision moves, since its documents no longer link the
 * domain. Answers whether the page stopped being served at its domain.
 */
export async function recordDomainCheck(db: Executor, pageId: string, found: boolean, revokeBefore: Date): Promise<boolean> {
  if (found) {
    await db
      .updateTable('divinux.statusPages')
      .set({ customDomainCheckedAt: sql<Date>`now()`, customDomainFailingSince: null })
      .where('id', '=', pageId)
      .execute()
    return false
  }
  const revoked = sql<boolean>`coalesce(custom_domain_failing_since, now()) < ${revokeBefore}`
  const row = await db
    .updateTable('divinux.statusPages')
    .set({
      customDomainCheckedAt: sql<Date>`now()`,
      customDomainFailingSince: sql<Date | null>`case when ${revoked} then null else coalesce(custom_domain_failing_since, now()) end`,
      customDomainVerifiedAt: sql<Date | null>`case when ${revoked} then null else custom_domain_verified_at end`,
      customDomainClaimedAt: sql<Date>`case when ${revoked} then now() else custom_domain_claimed_at end`,
      revision: sql<number>`revision + case when ${revoked} then 1 else 0 end`,
    })
    .where('id', '=', pageId)
    .returning(['customDomainVerifiedAt'])
    .executeTakeFirst()
  return row?.customDomainVerifiedAt === null
}

/** Claims never verified and older than `before` end: the domain is free of them. */
export async function expireDomainClaims(db: Executor, before: Date) {
  return db
    .updateTable('divinux.statusPages')
    .set({ ...domainClaim(null), updatedAt: sql<Date>`now()` })
    .where('customDomain', 'is not', null)
    .where('customDomainVerifiedAt', 'is', null)
    .where('customDomainClaimedAt', '<', before)
    .returning(['id', 'organizationId'])
    .execute()
}
