/**
 * Keeps this process's firing writes in the order they began where correlation depends on it
 * (decision 0019, "Correlation"). Whether a new alert goes past correlation is decided in the
 * statement that writes it, by what is committed: an open incident of its organization, or an
 * urgent alert (P1, P2) of it waiting to be correlated, sends it to correlation. A write that
 * began while an urgent one of a quiet organization was under way in another transaction (a
 * delivery with a retry key, or the batch before) could not see it, and wrote its alert
 * past correlation, paging alone: a storm's root and its first symptom, sent in that order, paged
 * twice. So a write waits for the urgent writes of its organizations that began before it while
 * those organizations were quiet.
 *
 * Once an urgent write of an organization committed, the organization is busy for BUSY_MS: its
 * alert waits for correlation, then is in an open incident, and either sends the next alerts to
 * correlation without waiting. So in a storm only the first root makes writes wait, for one commit.
 * What may still page twice: a root and its symptom in the moment after an incident of theirs was
 * resolved within BUSY_MS, and alerts arriving at two replicas, which do not know each other's writes.
 *
 * In a busy organization the symptom goes to correlation, and the same holds there: the event
 * dispatcher must not correlate a symptom committed while its root's write is still under way, or
 * the symptom finds no incident and pages alone. So the dispatcher waits for the urgent writes
 * under way when it looks (`urgentWritten`), at most one commit, then claims. A root begun in the
 * round trip between that look and the claim is not waited for: its symptom would have to be
 * written and committed within that round trip to go before it.
 */
export interface Writing {
  /** The organizations of the write's alerts. */
  organizations: readonly string[]
  /** The organizations of its urgent alerts (P1, P2). */
  urgent: readonly string[]
}

export type WriteOrder = <T>(writing: Writing, write: () => Promise<T>) => Promise<T>

export interface WriteOrdering {
  /** Runs a firing write once the urgent writes it must follow have settled. */
  inOrder: WriteOrder
  /** Settles once every urgent write under way now has (the later ones are not waited for); undefined when none is. */
  urgentWritten(): Promise<void> | undefined
}

/** How long an organization counts as busy after an urgent write of it committed. */
export const BUSY_MS = 60_000

export function createWriteOrder(now: () => number = Date.now): WriteOrdering {
  /** Urgent writes under way of organizations that were quiet when they began. */
  const underWay = new Map<string, Set<Promise<unknown>>>()
  /** Every urgent write under way, of any organization. */
  const urgentUnderWay = new Set<Promise<unknown>>()
  const busyUntil = new Map<string, number>()
  const quiet = (organizationId: string) => (busyUntil.get(organizationId) ?? 0) <= now()

  function settled(urgent: readonly string[], written: Promise<unknown>, committed: boolean) {
    urgentUnderWay.delete(written)
    for (const organizationId of urgent) {
      const writes = underWay.get(organizationId)
      writes?.delete(written)
      if (writes?.size === 0) underWay.delete(organizationId)
      if (committed) busyUntil.set(organizationId, now() + BUSY_MS)
    }
    // Organizations long quiet are forgotten, so the map holds the busy ones only.
    if (committed) for (const [organizationId, until] of busyUntil) if (until <= now()) busyUntil.delete(organizationId)
  }

  const inOrder = <T>({ organizations, urgent }: Writing, write: () => Promise<T>): Promise<T> => {
    const earlier = organizations.flatMap((organizationId) => [...(underWay.get(organizationId) ?? [])])
    const written = earlier.length === 0 ? write() : Promise.allSettled(earlier).then(write)
    const quietUrgent = [...new Set(urgent)].filter(quiet)
    for (const organizationId of quietUrgent) underWay.set(organizationId, (underWay.get(organizationId) ?? new Set()).add(written))
    if (urgent.length > 0) {
      urgentUnderWay.add(written)
      written.then(
        () => settled(urgent, written, true),
        // The caller gets the failure; the writes waiting for it go on.
        () => settled(urgent, written, false),
      )
    }
    return written
  }

  return {
    inOrder,
    urgentWritten: () => (urgentUnderWay.size === 0 ? undefined : Promise.allSettled([...urgentUnderWay]).then(() => undefined)),
  }
}
