import { sql } from 'kysely'
import type { Executor, Page } from '@svc/db'
import { jsonb, jsonColumn, keptPrepared, paged } from '@svc/db'
import type { AttemptResult, ResultStatus } from '@svc/check-runner'
import { relayHealthy } from './relays.js'
import type { RunnableFields } from '../secrets/resolve.js'
import type { CheckRow } from './checks.js'

/** A run created by taking a due time: leased at once by the runner that took it, or queued. */
export interface TakenRun {
  id: string
  checkId: string
  kind: string
  dueAt: Date
  state: 'queued' | 'leased'
  /** The check as the statement that took it left it: what the run needs, read without another statement. */
  check: RunnableFields
}

export interface TakeOptions {
  /** The service's own region: its runs may be leased by the runner taking them. */
  region: string
  runnerId: string
  leaseSeconds: number
  /** How many of the local runs the runner starts now; the rest are queued for the next lease. */
  localSlots: number
  /** At most this many checks in one statement. */
  limit: number
  /** The runner has Chromium: it takes browser runs of its region too; without, it leaves them queued for a replica that has. */
  browser: boolean
  /**
   * Checks falling due within this many ms are taken too, their runs leased to start at their
   * due times (the runner waits for each); heartbeats are judged only once due.
   */
  aheadMs: number
}

/**
 * Takes every check due now or within `aheadMs` (up to `limit`, earliest first, skipping those
 * another runner holds): each moves on by its frequency and gets one run per region, in one
 * statement. A check overdue by more than a period (the service was down) runs once now, not
 * once per due time it missed. The first `localSlots` runs of the service's own region are
 * inserted already leased by this runner (no queued state to write and lease again), started at
 * their due times; relay regions and heartbeats are queued (a relay leases a run once it is due).
 * Answers the runs, how many checks were taken, and when the next check not taken falls due
 * (null when none will), so the runner sleeps until then (decision 0032, "Looking ahead").
 */
export async function takeDueChecks(
  db: Executor,
  options: TakeOptions,
): Promise<{ checks: number; runs: TakenRun[]; nextDueAt: Date | null }> {
  const { region, runnerId, leaseSeconds, localSlots, limit, browser, aheadMs } = options
  const horizon = sql`now() + make_interval(secs => ${aheadMs / 1000})`
  const result = await sql<
    {
      checkId: string | null
      kind: string
      dueAt: Date
      runId: string | null
      state: TakenRun['state'] | null
      nextDueAt: Date | null
    } & Omit<RunnableFields, 'kind'>
  >`${keptPrepared}
    with candidates as (
      select id from divinux.synthetic_checks
      where not paused and next_due_at <= ${horizon} and (kind <> 'heartbeat' or next_due_at <= now())
      order by next_due_at
      limit ${limit}
      for update skip locked
    ),
    advanced as (
      update divinux.synthetic_checks c
      set next_due_at = make_interval(secs => c.frequency_seconds)
        + case when c.next_due_at < now() - make_interval(secs => c.frequency_seconds) then now() else c.next_due_at end
      from candidates
      where c.id = candidates.id
      returning c.id, c.organization_id, c.kind, c.regions, c.next_due_at, c.next_due_at - make_interval(secs => c.frequency_seconds) as due_at,
        c.request, c.timeout_ms, c.degraded_ms, c.retries
    ),
    numbered as (
      select advanced.*, row_number() over (partition by runs_here order by due_at) as position, runs_here
      from advanced, lateral (
        select advanced.kind <> 'heartbeat' and (advanced.kind <> 'browser' or ${browser}) and ${region} = any(advanced.regions) as runs_here
      ) here
    ),
    runs as (
      insert into divinux.synthetic_runs (check_id, organization_id, region, due_at, state, runner_id, leased_until, started_at)
      select numbered.id, numbered.organization_id, run.region, numbered.due_at,
        case when run.leased then 'leased' else 'queued' end,
        case when run.leased then ${runnerId}::uuid end,
        case when run.leased then now() + make_interval(secs => ${leaseSeconds}) end,
        case when run.leased then greatest(now(), numbered.due_at) end
      from numbered, lateral (
        select region, numbered.runs_here and region = ${region} and numbered.position <= ${localSlots} as leased
        from unnest(numbered.regions) as region
      ) run
      on conflict (check_id, region, due_at) do nothing
      returning id, check_id, state
    )
    -- Due times after this statement: those of the checks not taken (a check due now that another
    -- runner holds is that runner's), and the next ones of the checks taken. One row even when
    -- nothing was due.
    select taken.*, upcoming.next_due_at as "nextDueAt"
    from (
      select min(due) as next_due_at from (
        select min(next_due_at) as due from divinux.synthetic_checks
        where not paused and next_due_at > now() and id not in (select id from candidates)
        union all select min(next_due_at) from advanced
      ) due_times
    ) upcoming
    left join (
      select numbered.id as "checkId", numbered.kind, numbered.due_at as "dueAt", runs.id as "runId", runs.state,
        numbered.organization_id as "organizationId", numbered.request, numbered.timeout_ms as "timeoutMs",
        numbered.degraded_ms as "degradedMs", numbered.retries
      from numbered left join runs on runs.check_id = numbered.id
    ) taken on true`.execute(db)
  const rows = result.rows.filter((row) => row.checkId !== null)
  const checks = new Set(rows.map((row) => row.checkId)).size
  const runs = rows.flatMap((row): TakenRun[] => {
    if (row.runId === null) return []
    const { organizationId, kind, request, timeoutMs, degradedMs, retries } = row
    const check = { organizationId, kind, request, timeoutMs, degradedMs, retries }
    return [{ id: row.runId, checkId: row.checkId!, kind: row.kind, dueAt: new Date(row.dueAt), state: row.state!, check }]
  })
  const nextDueAt = result.rows[0]?.nextDueAt
  return { checks, runs, nextDueAt: nextDueAt ? new Date(nextDueAt) : null }
}

/**
 * Leases up to `limit` queued runs of the service's own region (taken while every slot was busy).
 * A leased run is never leased again, even when its lease ran out: it started, and a due time
 * runs at most once (the maintenance job records it missed). As for relays, runs older than two
 * periods are left for the maintenance job to mark missed. A runner without Chromium leaves
 * browser runs to one that has it.
 */
export async function leaseLocalRuns(
  db: Executor,
  options: { region: string; runnerId: string; leaseSeconds: number; limit: number; browser: boolean },
) {
  const { region, runnerId, leaseSeconds, limit, browser } = options
  const result = await sql<{ id: string; checkId: string }>`${keptPrepared}
    with candidates as (
      select run.id from divinux.synthetic_runs run
      join divinux.synthetic_checks c on c.id = run.check_id
      where run.region = ${region} and run.state = 'queued'
        and run.due_at <= now() and run.due_at > now() - make_interval(secs => c.frequency_seconds * 2)
        and c.kind <> 'heartbeat' ${browser ? sql`` : sql`and c.kind <> 'browser'`}
      order by run.due_at
      limit ${limit}
      for update of run skip locked
    )
    update divinux.synthetic_runs run
    set state = 'leased', runner_id = ${runnerId}, leased_until = now() + make_interval(secs => ${leaseSeconds}), started_at = now()
    from candidates where run.id = candidates.id
    returning run.id, run.check_id as "checkId"`.execute(db)
  return result.rows
}

/**
 * Leases up to `limit` due runs of a relay's regions: queued ones, those whose lease ran out, and
 * those leased by a relay that stopped heartbeating. Runs older than two periods are left for
 * the maintenance job to mark missed: a relay coming back does not replay an hour of them.
 * Browser runs go only to a relay that said it has Chromium.
 */
export async function leaseRelayRuns(
  db: Executor,
  relay: { id: string; organizationId: string; regions: string[]; browser: boolean },
  limit: number,
) {
  if (relay.regions.length === 0) return []
  const result = await sql<{ id: string; checkId: string; region: string; dueAt: Date }>`
    with candidates as (
      select run.id from divinux.synthetic_runs run
      join divinux.synthetic_checks c on c.id = run.check_id
      left join divinux.synthetic_relays relay on relay.id = run.relay_id
      where run.organization_id = ${relay.organizationId}
        and run.region = any(array[${sql.join(relay.regions)}]::text[])
        ${relay.browser ? sql`` : sql`and c.kind <> 'browser'`}
        and run.due_at <= now() and run.due_at > now() - make_interval(secs => c.frequency_seconds * 2)
        and (run.state = 'queued' or (run.state = 'leased' and (run.leased_until < now() or (run.relay_id is not null and not ${relayHealthy}))))
      order by run.due_at
      limit ${limit}
      for update of run skip locked
    )
    update divinux.synthetic_runs run
    set state = 'leased', relay_id = ${relay.id}, started_at = now(),
        leased_until = now() + make_interval(secs => (select (c.timeout_ms * (c.retries + 1)) / 1000.0 + 30 from divinux.synthetic_checks c where c.id = run.check_id))
    from candidates where run.id = candidates.id
    returning run.id, run.check_id as "checkId", run.region, run.due_at as "dueAt"`.execute(db)
  return result.rows
}

/** The runs a relay holds now, by id; to tell results for runs it leased from the rest. */
export async function runsLeasedBy(db: Executor, relayId: string, runIds: readonly string[]) {
  if (runIds.length === 0) return []
  return db
    .selectFrom('divinux.syntheticRuns')
    .select(['id', 'checkId', 'state', 'relayId', 'resultId'])
    .where('id', 'in', runIds)
    .where('relayId', '=', relayId)
    .forUpdate()
    .execute()
}

/** A result to record: the run it completes and what it found. */
export interface RunResult {
  runId: string
  status: ResultStatus
  attempts: AttemptResult[]
  /** A relay's own id for the result: a result sent twice is recorded once. */
  resultId?: string
  /** When the run began and ended, for a result recorded after it (a runner gathers its results); absent: as leased and when recorded. */
  startedAt?: Date
  finishedAt?: Date
}

/** What judging a check reads of it. */
export type JudgedCheck = Pick<
  CheckRow,
  | 'id'
  | 'organizationId'
  | 'name'
  | 'kind'
  | 'request'
  | 'regions'
  | 'alertAfterFailures'
  | 'alertQuorum'
  | 'alertPriority'
  | 'escalationPolicyId'
  | 'statusComponentIds'
  | 'service'
  | 'state'
>

/**
 * Records runs' results (done, with every attempt and the last one's outcome in columns), for
 * runs still queued or leased (a run recorded already, or missed
 * meanwhile, stays as it is) and, in the same statement, locks their checks: replicas recording
 * results of one check take turns, and a batch locks its checks in id order so that two batches
 * do not deadlock. Answers each locked check with the runs of it that this statement completed.
 * Judging reads the results in a later statement, which sees any committed while it waited.
 */
export async function completeRuns(db: Executor, results: readonly RunResult[]): Promise<Array<JudgedCheck & { runIds: string[] }>> {
  const rows = results.map((result) => {
    const last = result.attempts.at(-1)
    return {
      run_id: result.runId,
      status: result.status,
      // Screenshots are stored apart (screenshots.ts), with the run.
      attempts: result.attempts.map(({ screenshot: _, ...stored }) => stored),
      total_ms: last?.timings.total ?? null,
      status_code: last?.statusCode ?? null,
      error: last?.error ?? null,
      result_id: result.resultId ?? null,
      started_at: result.startedAt?.toISOString() ?? null,
      finished_at: result.finishedAt?.toISOString() ?? null,
    }
  })
  // `= any` lets the planner read the runs by key: it takes a recordset for 100 rows, and would
  // hash a scan of every run otherwise.
  const locked = await sql<JudgedCheck & { runIds: string[] }>`${keptPrepared}
    with done as (
      update divinux.synthetic_runs run
      set state = 'done', status = result.status, attempts = result.attempts, total_ms = result.total_ms,
        status_code = result.status_code, error = result.error, result_id = result.result_id, leased_until = null,
        started_at = coalesce(result.started_at, run.started_at), finished_at = coalesce(result.finished_at, now())
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as result(
        run_id uuid, status text, attempts jsonb, total_ms double precision, status_code integer, error text, result_id text,
        started_at timestamptz, finished_at timestamptz)
      where run.id = result.run_id and run.id = any(${rows.map((row) => row.run_id)}::uuid[]) and run.state in ('queued', 'leased')
      returning run.id, run.check_id
    )
    select c.id, c.organization_id as "organizationId", c.name, c.kind, c.request, c.regions,
      c.alert_after_failures as "alertAfterFailures", c.alert_quorum as "alertQuorum", c.alert_priority as "alertPriority",
      c.escalation_policy_id as "escalationPolicyId", c.status_component_ids as "statusComponentIds", c.service, c.state,
      array(select done.id from done where done.check_id = c.id)::text[] as "runIds"
    from divinux.synthetic_checks c
    where c.id in (select check_id from done)
    order by c.id
    for update of c`.execute(db)
  return locked.rows
}

/** A run recorded as done at once: heartbeat evaluations and pings. */
export async function insertDoneRun(
  db: Executor,
  run: { checkId: string; organizationId: string; region: string; dueAt: Date; status: ResultStatus; attempts: AttemptResult[] },
) {
  const last = run.attempts.at(-1)
  await db
    .insertInto('divinux.syntheticRuns')
    .values({
      checkId: run.checkId,
      organizationId: run.organizationId,
      region: run.region,
      dueAt: run.dueAt,
      state: 'done',
      status: run.status,
      attempts: jsonb(run.attempts),
      totalMs: last?.timings.total ?? null,
      error: last?.error ?? null,
      startedAt: sql<Date>`now()`,
      finishedAt: sql<Date>`now()`,
    })
    .onConflict((conflict) => conflict.columns(['checkId', 'region', 'dueAt']).doNothing())
    .execute()
}

/**
 * The newest `depth` results of each region of the given checks, newest first, with when the
 * newest finished: what a check's judgement reads, after each result and at every API read. Each
 * (check, region) walks the (check_id, region, due_at) index backwards and stops after `depth`
 * done runs, however long the retention.
 */
export async function recentResultsOf(db: Executor, checks: ReadonlyArray<{ id: string; regions: readonly string[] }>, depth: number) {
  const pairs = checks.flatMap((check) => check.regions.map((region) => ({ checkId: check.id, region })))
  if (pairs.length === 0) return []
  const result = await sql<{ checkId: string; region: string; statuses: ResultStatus[]; lastRunAt: Date }>`${keptPrepared}
    select pair.check_id as "checkId", pair.region, latest.statuses, latest.last_run_at as "lastRunAt"
    from unnest(${pairs.map((pair) => pair.checkId)}::uuid[], ${pairs.map((pair) => pair.region)}::text[]) as pair(check_id, region)
    cross join lateral (
      select array_agg(status order by due_at desc) as statuses, max(finished_at) as last_run_at
      from (
        select status, due_at, finished_at from divinux.synthetic_runs run
        where run.check_id = pair.check_id and run.region = pair.region and run.state = 'done'
        order by run.due_at desc limit ${depth}
      ) newest
    ) latest
    where latest.statuses is not null`.execute(db)
  return result.rows
}

/** A run's stored attempts, as `completeRuns` wrote them. */
export const storedAttempts = jsonColumn<AttemptResult[]>()

/** The newest finished run of each of these regions of a check, with what it saw: why a failing region fails. */
export async function latestRunsOf(db: Executor, checkId: string, regions: readonly string[]) {
  if (regions.length === 0) return []
  return db
    .selectFrom('divinux.syntheticRuns')
    .select(['region', 'status', 'statusCode', 'error', 'attempts'])
    .distinctOn('region')
    .where('checkId', '=', checkId)
    .where('region', 'in', regions)
    .where('state', '=', 'done')
    .orderBy('region')
    .orderBy('dueAt', 'desc')
    .execute()
}

export interface ResultFilter {
  from?: Date
  to?: Date
  region?: string
  status?: ResultStatus
}

export async function listResults(db: Executor, organizationId: string, checkId: string, filter: ResultFilter, page: Page) {
  let base = db
    .selectFrom('divinux.syntheticRuns')
    .where('organizationId', '=', organizationId)
    .where('checkId', '=', checkId)
    .where('state', '=', 'done')
  if (filter.from) base = base.where('dueAt', '>=', filter.from)
  if (filter.to) base = base.where('dueAt', '<', filter.to)
  if (filter.region) base = base.where('region', '=', filter.region)
  if (filter.status) base = base.where('status', '=', filter.status)
  return paged(
    base,
    (rows) =>
      rows
        .select(['id', 'region', 'dueAt', 'status', 'attempts', 'totalMs', 'statusCode', 'error', 'relayId', 'startedAt', 'finishedAt'])
        .orderBy('dueAt', 'desc')
        .orderBy('id'),
    page,
  )
}

/** Why a run whose lease ran out is recorded missed. */
export const LEASE_RAN_OUT_ERROR = 'its lease ran out before a result came: not run again, so that a due time runs at most once'

/**
 * Marks as missed the runs nobody took within two periods, and the service's own runs whose
 * lease ran out (they started; a due time runs at most once). A relay's run whose lease ran out
 * is leased again by a relay for two periods first (decision 0016, "Relays"). Answers how many.
 */
export async function markMissedRuns(db: Executor): Promise<number> {
  const result = await sql`
    update divinux.synthetic_runs run
    set state = 'missed', leased_until = null, error = case when run.state = 'leased' then ${LEASE_RAN_OUT_ERROR} else run.error end
    from divinux.synthetic_checks c
    where c.id = run.check_id and (
      (run.state = 'leased' and run.leased_until < now() and run.relay_id is null)
      or (run.state in ('queued', 'leased') and (run.state = 'queued' or run.leased_until < now())
        and run.due_at < now() - make_interval(secs => greatest(c.frequency_seconds * 2, 120))))`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/**
 * Removes up to `batch` raw runs due before `before`; answers how many. Any of them, not the
 * oldest first: every one goes, and the BRIN index on the due time (migration 0093) finds them
 * without reading the rest, but gives them in no order.
 */
export async function deleteOldRuns(db: Executor, before: Date, batch: number): Promise<number> {
  const result = await sql`
    delete from divinux.synthetic_runs where id in (
      select id from divinux.synthetic_runs where due_at < ${before} limit ${batch}
    )`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/**
 * Aggregates the raw runs of [from, to) into buckets of `interval`, replacing what was there:
 * runs, failures, degraded, mean and p50/p95/p99 of the total time, per check and region.
 */
export async function rollUp(db: Executor, interval: 'hour' | 'day', from: Date, to: Date): Promise<number> {
  const result = await sql`
    insert into divinux.synthetic_rollups (check_id, organization_id, region, interval, bucket_start, runs, failures, degraded, avg_ms, p50_ms, p95_ms, p99_ms)
    select check_id, organization_id, region, ${interval}, date_trunc(${interval}::text, due_at, 'UTC'), count(*)::int,
      count(*) filter (where status = 'failing')::int, count(*) filter (where status = 'degraded')::int,
      avg(total_ms), percentile_cont(0.5) within group (order by total_ms), percentile_cont(0.95) within group (order by total_ms),
      percentile_cont(0.99) within group (order by total_ms)
    from divinux.synthetic_runs
    where state = 'done' and due_at >= ${from} and due_at < ${to}
    group by 1, 2, 3, 5
    on conflict (check_id, region, interval, bucket_start) do update set
      runs = excluded.runs, failures = excluded.failures, degraded = excluded.degraded, avg_ms = excluded.avg_ms,
      p50_ms = excluded.p50_ms, p95_ms = excluded.p95_ms, p99_ms = excluded.p99_ms`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

export interface StatsRow {
  bucket: Date
  region: string | null
  runs: number
  failures: number
  degraded: number
  avgMs: number | null
  p50Ms: number | null
  p95Ms: number | null
  p99Ms: number | null
}

/** Buckets computed from the raw runs (exact percentiles). */
export async function statsFromRuns(db: Executor, checkId: string, interval: 'hour' | 'day', from: Date, to: Date, byRegion: boolean) {
  const region = byRegion ? sql`region` : sql`null::text`
  const result = await sql<StatsRow>`
    select date_trunc(${interval}::text, due_at, 'UTC') as bucket, ${region} as region, count(*)::int as runs,
      count(*) filter (where status = 'failing')::int as failures, count(*) filter (where status = 'degraded')::int as degraded,
      avg(total_ms) as "avgMs", percentile_cont(0.5) within group (order by total_ms) as "p50Ms",
      percentile_cont(0.95) within group (order by total_ms) as "p95Ms", percentile_cont(0.99) within group (order by total_ms) as "p99Ms"
    from divinux.synthetic_runs
    where check_id = ${checkId} and state = 'done' and due_at >= ${from} and due_at < ${to}
    group by 1, 2 order by 1, 2`.execute(db)
  return result.rows
}

/**
 * Buckets from the roll-ups: counts add up exactly; the mean is weighted by runs; percentiles of
 * several buckets are the run-weighted mean of theirs (an approximation, said in the API).
 */
export async function statsFromRollups(db: Executor, checkId: string, interval: 'hour' | 'day', from: Date, to: Date, byRegion: boolean) {
  const region = byRegion ? sql`region` : sql`null::text`
  const weighted = (column: string) =>
    sql`sum(${sql.ref(column)} * runs) / nullif(sum(runs) filter (where ${sql.ref(column)} is not null), 0)`
  const result = await sql<StatsRow>`
    select date_trunc(${interval}::text, bucket_start, 'UTC') as bucket, ${region} as region, sum(runs)::int as runs,
      sum(failures)::int as failures, sum(degraded)::int as degraded, ${weighted('avg_ms')} as "avgMs", ${weighted('p50_ms')} as "p50Ms",
      ${weighted('p95_ms')} as "p95Ms", ${weighted('p99_ms')} as "p99Ms"
    from divinux.synthetic_rollups
    where check_id = ${checkId} and interval = ${interval === 'day' ? 'day' : 'hour'} and bucket_start >= ${from} and bucket_start < ${to}
    group by 1, 2 order by 1, 2`.execute(db)
  return result.rows
}

/** Runs and failures of a check in [from, to) outside the given windows, from the raw runs. */
export async function availabilityFromRuns(db: Executor, checkId: string, from: Date, to: Date, windows: Array<{ from: Date; to: Date }>) {
  const outside = sql.join([sql``, ...windows.map((window) => sql`and not (due_at >= ${window.from} and due_at < ${window.to})`)], sql` `)
  const result = await sql<{ runs: number; failures: number }>`
    select count(*)::int as runs, count(*) filter (where status = 'failing')::int as failures
    from divinux.synthetic_runs
    where check_id = ${checkId} and state = 'done' and due_at >= ${from} and due_at < ${to} ${outside}`.execute(db)
  return result.rows[0] ?? { runs: 0, failures: 0 }
}

/** The same from the hourly roll-ups, leaving out every hour a window touches. */
export async function availabilityFromRollups(
  db: Executor,
  checkId: string,
  from: Date,
  to: Date,
  windows: Array<{ from: Date; to: Date }>,
) {
  const outside = sql.join(
    [sql``, ...windows.map((window) => sql`and not (bucket_start < ${window.to} and bucket_start + interval '1 hour' > ${window.from})`)],
    sql` `,
  )
  const result = await sql<{ runs: number; failures: number }>`
    select coalesce(sum(runs), 0)::int as runs, coalesce(sum(failures), 0)::int as failures
    from divinux.synthetic_rollups
    where check_id = ${checkId} and interval = 'hour' and bucket_start >= ${from} and bucket_start < ${to} ${outside}`.execute(db)
  return result.rows[0] ?? { runs: 0, failures: 0 }
}
