import type { Executor } from '@svc/db'
import { inTransaction, type JobQueue } from '@svc/jobs'

// Silences own the queue that says one ended; paging (paging/escalator.ts) works it and lets go
// of the silence's alerts.

/** One job when a silence ends (or is deleted or shortened): `{ silenceId }`. */
export const SILENCE_END_QUEUE = 'alerting.silence-ended'

export interface SilenceEndJob {
  silenceId: string
}

/** Sends, in the caller's transaction, the job that lets go of a silence's alerts at `endsAt`. */
export async function scheduleSilenceEnd(jobs: JobQueue, db: Executor, silenceId: string, endsAt: Date): Promise<void> {
  await jobs.send(SILENCE_END_QUEUE, { silenceId } satisfies SilenceEndJob, { db: inTransaction(db), startAfter: endsAt })
}
