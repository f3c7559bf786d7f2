import type { Kysely } from 'kysely'
import { entitledTo } from '@svc/auth'
import type { DB } from '@svc/db'

/** Paging must not stop because a card expired: ingestion keeps working this long after a plan lapses. */
export const INGEST_GRACE_DAYS = 7
/** How long one answer is kept: ingestion is the hot path, and plans change rarely. */
const CACHE_MS = 60_000

/**
 * Whether an organization's alerting plan (or its 7 days of grace) lets ingestion create alerts,
 * when billing is on; each organization's answer is kept for a minute per replica.
 */
export function createIngestPlanCheck(db: Kysely<DB>, enforced: boolean) {
  const answers = new Map<string, { holds: boolean; until: number }>()
  return async function planHolds(organizationId: string): Promise<boolean> {
    if (!enforced) return true
    const known = answers.get(organizationId)
    if (known && known.until > Date.now()) return known.holds
    const holds = await entitledTo(db, organizationId, 'alerting', INGEST_GRACE_DAYS)
    if (answers.size > 10_000) answers.clear()
    answers.set(organizationId, { holds, until: Date.now() + CACHE_MS })
    return holds
  }
}
