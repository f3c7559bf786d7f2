import type { Executor } from '@svc/db'
import { ensureQueue, inTransaction, type JobQueue, type QueuePolicy } from '@svc/jobs'
import type { EventName, EventPayloads } from './payloads.js'

/**
 * Publishes an event to every queue subscribed to it, inside the caller's transaction, so the
 * event exists exactly when the change that caused it commits.
 *
 * Not pg-boss's own `publish`: that one looks subscriptions up outside the transaction and
 * ignores failed sends (`Promise.allSettled`), and on PostgreSQL a failed statement turns the
 * caller's COMMIT into a silent rollback. Here every send is awaited and a failure throws.
 */
export async function publish<E extends EventName>(jobs: JobQueue, executor: Executor, event: E, payload: EventPayloads[E]): Promise<void> {
  const db = inTransaction(executor)
  // pg-boss 10 keeps subscriptions in its own table; `subscribe` below writes them.
  const { rows } = await db.executeSql('select name from pgboss.subscription where event = $1', [event])
  for (const { name } of rows as Array<{ name: string }>) await jobs.send(name, payload, { db })
}

/**
 * `publish` for many events of one name in the caller's transaction: the subscriptions read once,
 * one insert per subscribed queue however many events (a batch of ingested alerts announcing
 * themselves).
 */
export async function publishAll<E extends EventName>(
  jobs: JobQueue,
  executor: Executor,
  event: E,
  payloads: ReadonlyArray<EventPayloads[E]>,
): Promise<void> {
  if (payloads.length === 0) return
  const db = inTransaction(executor)
  const { rows } = await db.executeSql('select name from pgboss.subscription where event = $1', [event])
  for (const { name } of rows as Array<{ name: string }>)
    await jobs.insert(
      payloads.map((data) => ({ name, data })),
      { db },
    )
}

/**
 * Creates the consumer's queue (idempotent) and subscribes it to an event. Each consuming
 * surface names its own queue, so each gets its own copy of every event.
 */
export async function subscribe(jobs: JobQueue, event: EventName, queue: string, policy: QueuePolicy = {}): Promise<void> {
  await ensureQueue(jobs, queue, policy)
  await jobs.subscribe(event, queue)
}
