import type { Database } from '@svc/db'
import { alertGetsAnalysis, publish, type CheckStateChanged } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import { type DispatchInterest, fireCheckAlert, resolveCheckAlert, resolvedSince } from '../alerts/index.js'

/** The queues alerting's copies of `check.failed` and `check.recovered` arrive on. */
export const CHECK_FAILED_QUEUE = 'alerting.check-failed'
export const CHECK_RECOVERED_QUEUE = 'alerting.check-recovered'

/**
 * A synthetic check that fails opens an alert (fingerprint `check:<id>`, deduplicated while it
 * is unresolved) that escalates with the check's policy like any other; its recovery resolves it.
 * Idempotent: a repeated `check.failed` counts an occurrence, a repeated recovery finds nothing open.
 */
export async function onCheckFailed(
  database: Database,
  jobs: JobQueue,
  interest: DispatchInterest,
  event: CheckStateChanged,
): Promise<boolean> {
  return database.db.transaction().execute(async (trx) => {
    if (await resolvedSince(trx, event)) return false
    const alert = await fireCheckAlert(trx, interest, event)
    if (alert.created && alertGetsAnalysis({ priority: event.priority, autoAnalysis: false }))
      await publish(jobs, trx, 'alert.created', {
        organizationId: event.organizationId,
        alertId: alert.id,
        priority: event.priority,
        autoAnalysis: false,
      })
    return alert.created
  })
}

export async function onCheckRecovered(database: Database, event: CheckStateChanged): Promise<void> {
  await resolveCheckAlert(database.db, event)
}
