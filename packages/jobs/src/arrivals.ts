import type PgBoss from 'pg-boss'
import { JOBS_CHANNEL, type JobArrivals, type SqlExecutor } from '@svc/db'

/**
 * How often a worker fetches when no arrival woke it: the safety net for notices missed while the
 * listener reconnected, and for a job made fetchable by a statement the trigger does not see.
 * pg-boss 10 polls every queue on its own interval (0.5–2 s here), which was most of what an idle
 * node spent: about 35 fetches a second for nothing (decision 0032).
 */
export const RESTING_POLL_SECONDS = 15

/** Due times kept per queue for a timed wake; later ones wait for the resting poll. */
const DUE_TIMES_KEPT = 1_000

/**
 * The trigger that announces jobs (decision 0032): after every statement that inserts jobs, or
 * updates them into a fetchable state (`created`, `retry`), one notice per queue on
 * `JOBS_CHANNEL` with the earliest `start_after`, sent when the statement's transaction commits.
 * pg-boss inserts every job, retry and dead letter through the partitioned `pgboss.job`, so one
 * statement-level trigger there sees them all. One statement under an advisory lock: replicas
 * starting together wait for each other instead of failing on concurrent DDL.
 */
const INSTALL_JOB_ARRIVALS = `
  do $install$
  begin
    perform pg_advisory_xact_lock(hashtextextended('svc.job_arrivals', 0));
    create or replace function pgboss.svc_announce_jobs() returns trigger language plpgsql as $announce$
    begin
      perform pg_notify('${JOBS_CHANNEL}', arrived.name || ':' || floor(extract(epoch from arrived.due) * 1000)::bigint)
      from (select name, min(start_after) as due from changed_jobs where state < 'active' group by name) as arrived;
      return null;
    end
    $announce$;
    create or replace trigger svc_job_inserts after insert on pgboss.job
      referencing new table as changed_jobs for each statement execute function pgboss.svc_announce_jobs();
    create or replace trigger svc_job_updates after update on pgboss.job
      referencing new table as changed_jobs for each statement execute function pgboss.svc_announce_jobs();
  end
  $install$`

/** Installs the arrivals trigger on pg-boss's schema; run after the queue has started (its schema exists). */
export async function installJobArrivals(sql: SqlExecutor): Promise<void> {
  await sql.executeSql(INSTALL_JOB_ARRIVALS)
}

/**
 * Makes every worker of `boss` fetch when a job for its queue arrives (at once, or at the job's
 * `start_after`), and otherwise only every RESTING_POLL_SECONDS. Workers registered before this
 * call keep their own interval.
 */
export function wakeWorkersOnArrival(boss: PgBoss, arrivals: JobArrivals): () => void {
  const workers = new Map<string, Set<string>>()
  const timed = new Map<string, { dues: number[]; timer?: NodeJS.Timeout }>()

  const wake = (queue: string) => {
    for (const id of workers.get(queue) ?? []) boss.notifyWorker(id)
  }

  /** Wakes the queue at its earliest kept due time, then arms for the next. */
  function arm(queue: string): void {
    const entry = timed.get(queue)
    if (!entry) return
    clearTimeout(entry.timer)
    const next = entry.dues[0]
    if (next === undefined) {
      timed.delete(queue)
      return
    }
    entry.timer = setTimeout(
      () => {
        const now = Date.now()
        entry.dues = entry.dues.filter((due) => due > now)
        wake(queue)
        arm(queue)
      },
      Math.max(0, next - Date.now()),
    )
    entry.timer.unref()
  }

  function arrived(queue: string, dueAt: number): void {
    if (!workers.has(queue)) return
    if (dueAt <= Date.now()) {
      wake(queue)
      return
    }
    const entry = timed.get(queue) ?? { dues: [] }
    timed.set(queue, entry)
    if (entry.dues.includes(dueAt)) return
    entry.dues.push(dueAt)
    entry.dues.sort((a, b) => a - b)
    if (entry.dues.length > DUE_TIMES_KEPT) entry.dues.length = DUE_TIMES_KEPT
    if (entry.dues[0] === dueAt) arm(queue)
  }

  const unsubscribe = arrivals.subscribe(arrived, () => {
    for (const queue of workers.keys()) wake(queue)
  })

  const work = boss.work.bind(boss) as (name: string, ...rest: unknown[]) => Promise<string>
  const offWork = boss.offWork.bind(boss)
  boss.work = (async (name: string, ...rest: unknown[]) => {
    const handler = rest.pop()
    const options = (rest[0] ?? {}) as PgBoss.WorkOptions
    const id = await work(name, { ...options, pollingIntervalSeconds: RESTING_POLL_SECONDS }, handler)
    const ids = workers.get(name) ?? new Set<string>()
    ids.add(id)
    workers.set(name, ids)
    return id
  }) as PgBoss['work']
  boss.offWork = (async (value: string | { id: string }) => {
    if (typeof value === 'string') workers.delete(value)
    else for (const ids of workers.values()) ids.delete(value.id)
    await offWork(value as never)
  }) as PgBoss['offWork']

  return () => {
    unsubscribe()
    for (const entry of timed.values()) clearTimeout(entry.timer)
    timed.clear()
  }
}
