import { Resolver } from 'node:dns/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '@svc/db'
import { ensureQueue, type JobQueue } from '@svc/jobs'
import { domainsToRecheck, expireDomainClaims, recordDomainCheck, type PageRow } from '../queries/pages.js'

// Decision 0015, "Custom domains": a page is served at a custom domain only once whoever claimed
// it proved control of the domain's DNS with a TXT record holding the token we issued; the record
// is checked again every day, and a claim never verified ends after a week.

/** The TXT record's name: a label under the domain itself, so only its DNS owner can write it. */
export const recordNameOf = (domain: string) => `_statuspage-verification.${domain}`
export const recordValueOf = (token: string) => `incident-platform-verification=${token}`

/** A claim not verified within this long ends, and the domain is free of it. */
export const CLAIM_DAYS = 7
/** A verified domain's record is looked for again after this long. */
export const RECHECK_HOURS = 24
/** A verified domain whose record is missing this long stops being served (a DNS blip is not enough). */
export const GRACE_HOURS = 72

export const DOMAIN_QUEUE = 'statuspages.domains'
const HOUR_MS = 3_600_000
const BATCH = 200

export type DomainCheck = { found: true } | { found: false; reason: string }

export interface DomainVerification {
  status: 'pending' | 'verified' | 'failing'
  recordType: 'TXT'
  recordName: string
  recordValue: string
  claimedAt: string | null
  verifiedAt: string | null
  checkedAt: string | null
  /** A pending claim ends then unless verified. */
  expiresAt: string | null
}

/** What a manager needs to verify the page's domain, or null without one. */
export function verificationOf(row: PageRow): DomainVerification | null {
  if (!row.customDomain || !row.customDomainToken) return null
  const iso = (date: Date | null) => date?.toISOString() ?? null
  return {
    status: row.customDomainVerifiedAt ? (row.customDomainFailingSince ? 'failing' : 'verified') : 'pending',
    recordType: 'TXT',
    recordName: recordNameOf(row.customDomain),
    recordValue: recordValueOf(row.customDomainToken),
    claimedAt: iso(row.customDomainClaimedAt),
    verifiedAt: iso(row.customDomainVerifiedAt),
    checkedAt: iso(row.customDomainCheckedAt),
    expiresAt:
      row.customDomainVerifiedAt || !row.customDomainClaimedAt
        ? null
        : new Date(row.customDomainClaimedAt.getTime() + CLAIM_DAYS * 24 * HOUR_MS).toISOString(),
  }
}

/** Looks the record up with node:dns (the system's resolver, or DNS_SERVERS). */
export function createDomainChecker(dnsServers?: readonly string[]) {
  const resolver = new Resolver({ timeout: 3_000, tries: 2 })
  if (dnsServers && dnsServers.length > 0) resolver.setServers([...dnsServers])
  return async function check(domain: string, token: string): Promise<DomainCheck> {
    const name = recordNameOf(domain)
    let records: string[][]
    try {
      records = await resolver.resolveTxt(name)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const missing = code === 'ENOTFOUND' || code === 'ENODATA'
      return { found: false, reason: missing ? `no TXT record at ${name}` : `the TXT record at ${name} could not be read (${code})` }
    }
    // A long TXT value arrives in chunks of 255 bytes: each record is its chunks joined.
    const values = records.map((chunks) => chunks.join(''))
    if (values.includes(recordValueOf(token))) return { found: true }
    return { found: false, reason: `the TXT records at ${name} do not hold ${recordValueOf(token)}` }
  }
}

export type DomainChecker = ReturnType<typeof createDomainChecker>

/**
 * The hourly job: verified domains whose check is a day old are checked again (missing for
 * GRACE_HOURS, the page stops being served there), and claims older than CLAIM_DAYS end.
 */
export function createDomainMaintenance(deps: {
  database: Database
  jobs: JobQueue
  check: DomainChecker
  changed: (pageId: string) => void
  log: FastifyBaseLogger
}) {
  const { database, jobs, check, changed, log } = deps

  async function maintain(now = new Date()): Promise<void> {
    const db = database.db
    for (;;) {
      const due = await domainsToRecheck(db, new Date(now.getTime() - RECHECK_HOURS * HOUR_MS), BATCH)
      for (const page of due) {
        const result = await check(page.customDomain!, page.customDomainToken!)
        const revoked = await recordDomainCheck(db, page.id, result.found, new Date(now.getTime() - GRACE_HOURS * HOUR_MS))
        if (!result.found) log.warn({ pageId: page.id, domain: page.customDomain, reason: result.reason }, 'custom domain check failed')
        if (revoked) {
          log.warn({ pageId: page.id, domain: page.customDomain }, 'custom domain no longer verified: the page is not served there')
          changed(page.id)
        }
      }
      if (due.length < BATCH) break
    }
    const expired = await expireDomainClaims(db, new Date(now.getTime() - CLAIM_DAYS * 24 * HOUR_MS))
    if (expired.length > 0) log.info({ pages: expired.map((page) => page.id) }, 'unverified custom domain claims ended')
  }

  return {
    maintain,
    async start(): Promise<void> {
      await ensureQueue(jobs, DOMAIN_QUEUE, { retryLimit: 1, expireInSeconds: 900 })
      await jobs.work(DOMAIN_QUEUE, { pollingIntervalSeconds: 2 }, async () => {
        await maintain()
      })
      await jobs.schedule(DOMAIN_QUEUE, '41 * * * *')
    },
    async stop(): Promise<void> {
      await jobs.offWork(DOMAIN_QUEUE)
    },
  }
}
