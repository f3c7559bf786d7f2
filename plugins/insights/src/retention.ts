import { sql } from 'kysely'
import { deleteInBatches, type Executor } from '@svc/db'

/**
 * Analyses' events (requested, steps, retries, completed) past ANALYSIS_EVENT_RETENTION_DAYS, of
 * finished analyses only, in batches (decision 0022). The analyses keep their findings, evidence
 * and agents' outputs.
 */
export async function pruneAnalysisEvents(db: Executor, retentionDays: number, now = new Date()) {
  const before = new Date(now.getTime() - retentionDays * 86_400_000)
  return {
    analysisEventsRemoved: await deleteInBatches(
      db,
      'divinux.analysis_events',
      sql`created_at < ${before}
          and exists (select 1 from divinux.analyses where analyses.id = analysis_events.analysis_id and analyses.status in ('completed', 'failed'))`,
    ),
  }
}
