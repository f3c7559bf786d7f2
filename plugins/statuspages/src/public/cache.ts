import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import type { Executor } from '@svc/db'
import { publishedPageBy } from '../queries/pages.js'

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
  customDomain: string | null
  allowSubscribers: boolean
  supportUrl: string | null
  revision: number
  updatedAt: Date
}

export interface RenderedDocument {
  /** The bytes as sent (encoded once, not on every request). */
  body: Buffer
  /** The same bytes gzipped once, for clients that accept it (most do: browsers, HTTP libraries). */
  gzipped: Buffer
  etag: string
  gzipEtag: string
  contentType: string
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
  const documents = new Map<string, RenderedDocument>()

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
    const page = row ? { ...row, revision: Number(row.revision) } : null
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

  function dropDocuments(pageId: string): void {
    for (const key of documents.keys()) if (key.startsWith(`${pageId}:`)) documents.delete(key)
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
    renderedOf: (page: PublicPage, name: string): RenderedDocument | undefined => documents.get(`${page.id}:${page.revision}:${name}`),
    /** A document of the page at its revision, rendered by `render` when not cached yet. */
    async document(
      page: PublicPage,
      name: string,
      render: () => Promise<{ body: string; contentType: string }>,
    ): Promise<RenderedDocument> {
      const key = `${page.id}:${page.revision}:${name}`
      const cached = documents.get(key)
      if (cached) return cached
      // A document of an earlier period (`uptime@<minute>`) or revision is not asked for again.
      const base = name.split('@')[0]
      for (const other of documents.keys()) {
        const [pageId, , otherName = ''] = other.split(':')
        if (pageId === page.id && otherName.split('@')[0] === base) documents.delete(other)
      }
      const rendered = await render()
      const body = Buffer.from(rendered.body)
      const hash = createHash('sha1').update(body).digest('base64url')
      const document = {
        body,
        gzipped: gzipSync(body),
        contentType: rendered.contentType,
        etag: `"${hash}"`,
        gzipEtag: `"${hash}-gzip"`,
      }
      documents.set(key, document)
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
