import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import type { Executor } from '@svc/db'
import type { Theme } from '../branding/theme.js'
import { publishedPageBy, type HeaderLink, type PageAudience } from '../queries/pages.js'

/** How long a replica trusts what it read of a page without asking the database again. */
export const FRESH_FOR_MS = 1_000
/**
 * How many slugs and hosts with no published page are remembered: any client can ask for any
 * slug or send any Host header, so what is remembered of them is bounded (oldest dropped first).
 */
export const MISSES_KEPT = 1_000

export interface PublicPage {
  id: string
  organizationId: string
  name: string
  slug: string
  timeZone: string
  /** The languages it is read in, its default first. */
  locales: string[]
  customDomain: string | null
  allowSubscribers: boolean
  /** Whether components held by their checks alone colour the overall status. */
  bannerFollowsChecks: boolean
  supportUrl: string | null
  /** `private`: read only by the organization's members and readers signed in by e-mail (private/readers.ts). */
  visibility: 'public' | 'private'
  /** The e-mail domains whose addresses may sign in to a private page by a link. */
  viewerEmailDomains: string[]
  /** Its audiences, ordered by id (decision 0015, "Audiences"); most pages have none. */
  audiences: PageAudience[]
  /** Branding (decision 0015, "Branding"). */
  theme: Theme
  headerLinks: HeaderLink[]
  footerText: string | null
  /** Its logo and favicon as `<sha256>|<content type>`, or null. */
  logo: string | null
  favicon: string | null
  revision: number
  updatedAt: Date
}

/** One encoding of a rendered document, with every header its answers carry. */
export interface Representation {
  /** The bytes as sent (encoded once, not on every request). */
  bytes: Buffer
  /** A strong ETag of its own (RFC 9110 8.8.3): the gzipped bytes differ from the plain ones. */
  etag: string
  /** The headers of a 200 with these bytes, merged once so a request sets them in one call. */
  headers: Readonly<Record<string, string>>
  /** The headers of a 304 for them (no content type or encoding: no bytes are sent). */
  notModified: Readonly<Record<string, string>>
}

export interface RenderedDocument {
  identity: Representation
  /** Gzipped once, for clients that accept it (most do: browsers, HTTP libraries). */
  gzip: Representation
}

/** What a document's renderer gives: its text, its type, and headers of its own (caching, policy). */
export interface RenderedText {
  body: string
  contentType: string
  headers?: Readonly<Record<string, string>>
}

function representation(bytes: Buffer, etag: string, headers: Record<string, string>, contentType: string, encoding?: string) {
  const notModified = Object.freeze({ ...headers, etag })
  return {
    bytes,
    etag,
    notModified,
    headers: Object.freeze({ ...notModified, 'content-type': contentType, ...(encoding ? { 'content-encoding': encoding } : {}) }),
  }
}

interface Known<T> {
  value: T
  checkedAt: number
}

/**
 * The public documents of published pages, rendered once per page revision and kept in memory.
 * Every change to a page grows its revision in the database (queries/pages.ts `touchPage`); a
 * replica asks for the revision at most once a second per page, so a change made on another
 * replica shows within a second, and one made on this replica at once (`forget`).
 * Time-dependent documents (uptime) add their own period to the key.
 */
export function createPublicCache(db: Executor, now: () => number = Date.now) {
  const pages = new Map<string, Known<PublicPage>>()
  const misses = new Map<string, number>()
  // By page id: the documents rendered at one revision of the page, by name.
  const documents = new Map<string, { revision: number; byName: Map<string, RenderedDocument> }>()

  /** What this replica may answer from memory: the page, null for a remembered miss, undefined to ask. */
  function remembered(key: string): PublicPage | null | undefined {
    const known = pages.get(key)
    if (known && now() - known.checkedAt < FRESH_FOR_MS) return known.value
    const missedAt = misses.get(key)
    if (missedAt !== undefined && now() - missedAt < FRESH_FOR_MS) return null
    return undefined
  }

  async function lookup(key: string, by: 'slug' | 'customDomain', value: string): Promise<PublicPage | null> {
    const answer = remembered(key)
    if (answer !== undefined) return answer
    const known = pages.get(key)
    const row = await publishedPageBy(db, by, value)
    const page: PublicPage | null = row
      ? {
          ...row,
          visibility: row.visibility as PublicPage['visibility'],
          // Both written only from a validated request body.
          theme: row.theme as Theme,
          headerLinks: row.headerLinks as unknown as HeaderLink[],
          revision: Number(row.revision),
        }
      : null
    if (known && (!page || known.value.revision !== page.revision)) dropDocuments(known.value.id)
    if (page) {
      pages.set(key, { value: page, checkedAt: now() })
      misses.delete(key)
    } else {
      pages.delete(key)
      misses.delete(key)
      misses.set(key, now())
      if (misses.size > MISSES_KEPT) misses.delete(misses.keys().next().value!)
    }
    return page
  }

  function renderedOf(page: PublicPage, name: string): RenderedDocument | undefined {
    const rendered = documents.get(page.id)
    return rendered?.revision === page.revision ? rendered.byName.get(name) : undefined
  }

  function dropDocuments(pageId: string): void {
    documents.delete(pageId)
  }

  return {
    /** The published page with this slug, or null. */
    bySlug: (slug: string) => lookup(`slug:${slug}`, 'slug', slug),
    /** The published page at this custom domain, or null. */
    byDomain: (host: string) => lookup(`host:${host}`, 'customDomain', host),
    /**
     * What `bySlug` and `byDomain` would answer without the database, or undefined when they
     * must ask it: the answer to most requests, given without waiting on a promise.
     */
    rememberedSlug: (slug: string) => remembered(`slug:${slug}`),
    rememberedDomain: (host: string) => remembered(`host:${host}`),
    /** The document when it is rendered already at the page's revision. */
    renderedOf,
    /** A document of the page at its revision, rendered by `render` when not cached yet. */
    async document(page: PublicPage, name: string, render: () => Promise<RenderedText>): Promise<RenderedDocument> {
      const cached = renderedOf(page, name)
      if (cached) return cached
      const text = await render()
      const body = Buffer.from(text.body)
      const hash = createHash('sha1').update(body).digest('base64url')
      const headers = { ...text.headers }
      const document = {
        identity: representation(body, `"${hash}"`, headers, text.contentType),
        gzip: representation(gzipSync(body), `"${hash}-gzip"`, headers, text.contentType, 'gzip'),
      }
      let rendered = documents.get(page.id)
      // A request that read the page before a change answers what it rendered, but keeps nothing.
      if (rendered && rendered.revision > page.revision) return document
      if (rendered?.revision !== page.revision) {
        rendered = { revision: page.revision, byName: new Map() }
        documents.set(page.id, rendered)
      }
      // A document of an earlier period (`uptime@<minute>`) is not asked for again.
      const [base, period] = name.split('@')
      if (period !== undefined) for (const other of rendered.byName.keys()) if (other.split('@')[0] === base) rendered.byName.delete(other)
      rendered.byName.set(name, document)
      return document
    },
    /** A page changed here: this replica reads it again at its next request. */
    forget(pageId: string): void {
      for (const [key, known] of pages) if (known.value.id === pageId) pages.delete(key)
      // A slug or domain just given to this page may be remembered as a miss.
      misses.clear()
      dropDocuments(pageId)
    },
    /** How many slugs and hosts are remembered (for tests of the bound). */
    get remembered() {
      return pages.size + misses.size
    },
  }
}

export type PublicCache = ReturnType<typeof createPublicCache>
