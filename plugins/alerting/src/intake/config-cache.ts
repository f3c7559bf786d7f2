import type { Executor } from '@svc/db'
import { findIngestConfig, type IngestConfig } from './queries.js'

const TIME_TO_LIVE_MS = 30_000
const MAX_ENTRIES = 10_000

/**
 * Ingest configs by key hash, kept in memory for 30 s. Safe because every write made with one
 * re-checks, in the same statement, that the config still has that key, that secret and is
 * enabled (alerts/fire.ts); a stale entry only costs a fresh lookup. Unknown keys are
 * not remembered, so a key created a moment ago works at once.
 */
export function createConfigCache(db: Executor) {
  const entries = new Map<string, { config: IngestConfig; loadedAt: number }>()
  return {
    async get(apiKeyHash: string): Promise<{ config: IngestConfig; fresh: boolean } | undefined> {
      const entry = entries.get(apiKeyHash)
      if (entry && Date.now() - entry.loadedAt < TIME_TO_LIVE_MS) return { config: entry.config, fresh: false }
      return this.reload(apiKeyHash)
    },
    async reload(apiKeyHash: string): Promise<{ config: IngestConfig; fresh: boolean } | undefined> {
      entries.delete(apiKeyHash)
      const config = await findIngestConfig(db, apiKeyHash)
      if (!config) return undefined
      if (entries.size >= MAX_ENTRIES) entries.clear()
      entries.set(apiKeyHash, { config, loadedAt: Date.now() })
      return { config, fresh: true }
    },
  }
}
