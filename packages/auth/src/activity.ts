import { randomUUID } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'

export type ActivityKind = 'sign_in' | 'session_refresh' | 'impersonation' | 'api_use'

export interface Activity {
  userId: string
  kind: ActivityKind
  /** The service that saw it. */
  product: 'platform' | 'product'
  /** Impersonation: the platform admin acting as `userId`. */
  actedBy?: string
  /** The organization the request was for, if any: what its admins may see (decision 0022). */
  organizationId?: string
  ip: string | null
  userAgent: string | null
  at: Date
}

interface Row {
  userId: string
  day: string
  activityKey: string
  kind: ActivityKind
  product: string
  actedBy: string | null
  organizationId: string | null
  ip: string | null
  userAgent: string | null
  firstAt: Date
  lastAt: Date
  /** API use: the last request's time, turned into `lastAt` when written. */
  lastAtMs?: number
  /** API use: the user agent as received, cut when written. */
  rawUserAgent?: string
  requests: number
}

/** Rows held before a flush is started early. */
const MAX_PENDING = 5_000
const USER_AGENT_MAX = 300

const apiUseKey = (product: string, organizationId: string | undefined) =>
  organizationId === undefined ? `api:${product}` : `api:${product}:${organizationId}`

/**
 * The activity sampling rule (decision 0022): which row an activity counts into. API use is one
 * row per product, organization and day, impersonation one per admin, product, organization and
 * day; a sign-in or a refresh is a row of its own.
 */
function keyOf(activity: Activity): string {
  switch (activity.kind) {
    case 'api_use':
      return apiUseKey(activity.product, activity.organizationId)
    case 'impersonation':
      return `impersonation:${activity.product}:${activity.actedBy ?? ''}:${activity.organizationId ?? ''}`
    default:
      return `${activity.kind}:${randomUUID()}`
  }
}

/**
 * Records user activity off the request path: `record` merges into a map in memory (a request
 * pays for a map lookup), and a timer writes what gathered in one statement per second, upserting
 * by (user, day, key), so replicas and restarts add into the same rows. Writes that fail are
 * logged and dropped: activity is a record of use, not something a request may wait or fail for.
 */
export function createActivityRecorder(options: {
  db: Kysely<DB>
  /** The service recording: API use is per product. */
  product: 'platform' | 'product'
  log: { warn(details: object, message: string): void }
  flushIntervalMs?: number
}) {
  const pending = new Map<string, Row>()
  let flushing: Promise<void> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined

  async function write(rows: Row[]): Promise<void> {
    const document = JSON.stringify(
      rows.map((row) => ({
        user_id: row.userId,
        day: row.day,
        activity_key: row.activityKey,
        kind: row.kind,
        product: row.product,
        acted_by: row.actedBy,
        organization_id: row.organizationId,
        ip: row.ip,
        user_agent: row.userAgent,
        first_at: row.firstAt.toISOString(),
        last_at: row.lastAt.toISOString(),
        requests: row.requests,
      })),
    )
    await sql`
      with incoming as (
        select * from jsonb_to_recordset(${document}::jsonb) as t(
          user_id uuid, day date, activity_key text, kind text, product text, acted_by uuid, organization_id uuid,
          ip text, user_agent text, first_at timestamptz, last_at timestamptz, requests integer)
      )
      insert into core.user_activities (user_id, day, activity_key, kind, product, acted_by, organization_id, ip, user_agent, first_at, last_at, requests)
      select user_id, day, activity_key, kind, product, acted_by, organization_id, ip, user_agent, first_at, last_at, requests from incoming
       where exists (select 1 from core.users where users.id = incoming.user_id)
       order by user_id, day, activity_key
      on conflict (user_id, day, activity_key) do update set
        last_at = greatest(core.user_activities.last_at, excluded.last_at),
        first_at = least(core.user_activities.first_at, excluded.first_at),
        requests = core.user_activities.requests + excluded.requests,
        ip = excluded.ip,
        user_agent = excluded.user_agent`.execute(options.db)
  }

  function flush(): Promise<void> {
    closeApiDay()
    if (pending.size === 0) return flushing
    const rows = [...pending.values()].map((row) =>
      row.lastAtMs === undefined
        ? row
        : { ...row, lastAt: new Date(row.lastAtMs), userAgent: row.rawUserAgent?.slice(0, USER_AGENT_MAX) ?? null },
    )
    pending.clear()
    flushing = flushing.then(() =>
      write(rows).catch((error: unknown) => options.log.warn({ err: error, rows: rows.length }, 'user activity could not be recorded')),
    )
    return flushing
  }

  // API use, the one kind every request records, takes a shorter path: one map per UTC day keyed
  // by user and organization (each recorder serves one product), no date built per request.
  let apiUse = new Map<string, Row>()
  let apiDay = ''
  let apiDayEndsAt = 0
  const closeApiDay = () => {
    for (const row of apiUse.values()) pending.set(`${row.userId}\u0000${row.day}\u0000${row.activityKey}`, row)
    apiUse = new Map()
  }

  function record(activity: Activity): void {
    const day = activity.at.toISOString().slice(0, 10)
    const activityKey = keyOf(activity)
    const key = `${activity.userId}\u0000${day}\u0000${activityKey}`
    const existing = pending.get(key)
    if (existing) {
      existing.lastAt = activity.at
      existing.requests += 1
      existing.ip = activity.ip
      existing.userAgent = activity.userAgent?.slice(0, USER_AGENT_MAX) ?? null
      return
    }
    pending.set(key, {
      userId: activity.userId,
      day,
      activityKey,
      kind: activity.kind,
      product: activity.product,
      actedBy: activity.actedBy ?? null,
      organizationId: activity.organizationId ?? null,
      ip: activity.ip,
      userAgent: activity.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
      firstAt: activity.at,
      lastAt: activity.at,
      requests: 1,
    })
    if (pending.size >= MAX_PENDING) void flush()
  }

  return {
    record,
    /**
     * One authenticated request of `userId`, for `organizationId` when its path names one: the hot
     * path (decision 0022, "off the request path").
     */
    recordApiUse(userId: string, organizationId: string | undefined, ip: string | null, userAgent: string | undefined): void {
      const now = Date.now()
      if (now >= apiDayEndsAt) {
        closeApiDay()
        const midnight = Math.floor(now / 86_400_000) * 86_400_000
        apiDay = new Date(midnight).toISOString().slice(0, 10)
        apiDayEndsAt = midnight + 86_400_000
      }
      const key = organizationId === undefined ? userId : `${userId}\u0000${organizationId}`
      const row = apiUse.get(key)
      if (row) {
        row.lastAtMs = now
        row.requests += 1
        row.ip = ip
        row.rawUserAgent = userAgent
        return
      }
      apiUse.set(key, {
        userId,
        day: apiDay,
        activityKey: apiUseKey(options.product, organizationId),
        kind: 'api_use',
        product: options.product,
        actedBy: null,
        organizationId: organizationId ?? null,
        ip,
        userAgent: null,
        rawUserAgent: userAgent,
        firstAt: new Date(now),
        lastAt: new Date(now),
        lastAtMs: now,
        requests: 1,
      })
      if (apiUse.size >= MAX_PENDING) void flush()
    },
    /** Writes what is pending; resolves when every earlier write has finished. */
    flush,
    start(): void {
      timer ??= setInterval(() => void flush(), options.flushIntervalMs ?? 1_000)
      timer.unref()
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = undefined
      await flush()
    },
  }
}

export type ActivityRecorder = ReturnType<typeof createActivityRecorder>
