/** What a group commit needs: how to write a batch, how to write one entry, and what may not share a batch. */
export interface GroupCommitOptions<Entry, Result> {
  /** Writes the entries together (one transaction); answers each entry's result, in order. */
  writeBatch(batch: Entry[]): Promise<Result[]>
  /** Writes one entry alone: a lone entry, and each entry of a batch that failed. */
  writeOne(entry: Entry): Promise<Result>
  /** The most entries one batch takes; the rest wait for the next. */
  maxBatch: number
  /** Entries with one key never share a batch: the second waits for the next one. */
  keyOf?(entry: Entry): string
}

interface Pending<Entry, Result> {
  entry: Entry
  resolve(result: Result): void
  reject(error: unknown): void
}

/**
 * Writes what concurrent callers hand in together: one batch in flight at a time, and the
 * entries arriving meanwhile form the next one, so a write costs one round trip and one commit
 * per batch rather than per entry. A lone entry is written at once; nothing waits on a timer.
 * Each caller's promise settles only once its entry is committed. When a batch fails, each of
 * its entries is written alone and answers for itself: one bad entry (or a deadlock between
 * two batches) must not fail its neighbours.
 *
 * One batch in flight was measured against two for ingestion (decision 0007): two made
 * smaller batches and fewer writes a second.
 */
export function createGroupCommit<Entry, Result>(options: GroupCommitOptions<Entry, Result>) {
  const { writeBatch, writeOne, maxBatch, keyOf } = options
  let queue: Array<Pending<Entry, Result>> = []
  let writing = false

  function flush(): void {
    if (queue.length === 0 || writing) return
    const batch: Array<Pending<Entry, Result>> = []
    const later: Array<Pending<Entry, Result>> = []
    const keys = new Set<string>()
    for (const pending of queue) {
      const key = keyOf?.(pending.entry)
      if (batch.length >= maxBatch || (key !== undefined && keys.has(key))) later.push(pending)
      else {
        if (key !== undefined) keys.add(key)
        batch.push(pending)
      }
    }
    queue = later
    writing = true
    void write(batch).finally(() => {
      writing = false
      flush()
    })
  }

  const alone = (pending: Pending<Entry, Result>) => writeOne(pending.entry).then(pending.resolve, pending.reject)

  async function write(batch: Array<Pending<Entry, Result>>): Promise<void> {
    if (batch.length === 1) return alone(batch[0]!)
    try {
      const results = await writeBatch(batch.map((pending) => pending.entry))
      batch.forEach((pending, index) => pending.resolve(results[index]!))
    } catch {
      await Promise.all(batch.map(alone))
    }
  }

  /** Queues an entry; answers its result once it is committed. */
  const queued = (entry: Entry) => new Promise<Result>((resolve, reject) => queue.push({ entry, resolve, reject }))

  return {
    /** Answers the entry's result once it is committed. */
    write(entry: Entry): Promise<Result> {
      const result = queued(entry)
      flush()
      return result
    },
    /**
     * Answers each entry's result once it is committed. Entries handed in together share a batch
     * (up to `maxBatch`, and after the batch in flight): a caller that gathered them pays one write.
     */
    writeAll(entries: readonly Entry[]): Array<Promise<Result>> {
      const results = entries.map(queued)
      flush()
      return results
    },
  }
}
