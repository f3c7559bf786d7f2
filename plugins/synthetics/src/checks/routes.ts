import { createHash, randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { trackProductEvent } from '@svc/analytics'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import {
  AttemptResult,
  DEFAULT_GRACE_SECONDS,
  runCheck,
  type BrowserRuntime,
  type CheckKind,
  type HeartbeatRequest,
  type RunnableCheck,
} from '@svc/check-runner'
import { pageOf, type Executor, type Json } from '@svc/db'
import { BadRequestError, ListResponse, PaginationQuery } from '@svc/http'
import type { OutboundPolicy } from '@svc/outbound'
import {
  deleteCheck,
  insertCheck,
  listChecks,
  replaceHeartbeatToken,
  updateCheck,
  type CheckFields,
  type CheckRow,
} from '../queries/checks.js'
import { Check, CheckParams, MANAGED_BASE, OrgParams, ResultStatusSchema, checkBody, checkFieldsSchema, tags } from '../schemas.js'
import { failedRun, type Scheduler } from '../scheduling/scheduler.js'
import { runnableCheck } from '../secrets/resolve.js'
import type { SecretSealer } from '@svc/config'
import { auditEntry, checkOfRequest, judgementsOf } from './access.js'
import { checkBrowserBudget, checkDefinition, type DefinitionContext } from './definition.js'

export interface CheckRouteOptions {
  scheduler: Scheduler
  sealer: SecretSealer
  serviceRegion: string
  /** This replica's Chromium, when it has one: test runs of browser checks use it. */
  browser: BrowserRuntime | undefined
  browserRunsPerMonth: number
  policy: OutboundPolicy
  productUrl: string
  unknownComponents: DefinitionContext['unknownComponents']
  policyExists: DefinitionContext['policyExists']
}

/** A page, its scripts and a few clicks take longer than one request. */
const DEFAULT_TIMEOUT_MS: Record<CheckKind, number> = {
  http: 10_000,
  multistep: 10_000,
  browser: 30_000,
  tcp: 10_000,
  dns: 10_000,
  tls: 10_000,
  heartbeat: 10_000,
}
/** A heartbeat's first due time leaves it one period and its grace to send its first ping. */
function firstDueAt(fields: CheckFields): Date {
  if (fields.kind !== 'heartbeat') return new Date()
  const grace = (fields.request as HeartbeatRequest).graceSeconds ?? DEFAULT_GRACE_SECONDS
  return new Date(Date.now() + (fields.frequencySeconds + grace) * 1000)
}

const audited = (row: CheckRow) => ({
  name: row.name,
  kind: row.kind,
  frequencySeconds: row.frequencySeconds,
  regions: row.regions,
  paused: row.paused,
  service: row.service,
})
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')
/** A heartbeat's push token: the credential in its URL, kept only as its hash. */
const newHeartbeatToken = () => `hb_${randomBytes(24).toString('base64url')}`

const CreateBody = Type.Object(checkFieldsSchema, { additionalProperties: false })
const UpdateBody = Type.Object(
  Object.fromEntries(
    Object.entries(checkFieldsSchema).map(([key, schema]) => [key, key === 'kind' ? schema : Type.Optional(schema)]),
  ) as typeof checkFieldsSchema,
  { additionalProperties: false, minProperties: 1 },
)
const Kindless = Type.Omit(UpdateBody, ['kind'])

const RunNow = Type.Object(
  { status: ResultStatusSchema, region: Type.String(), attempts: Type.Array(AttemptResult) },
  { title: 'SyntheticTestRun', description: 'A test run: answered, not stored, and it changes no state' },
)

/** The request body's fields over what a check has (update) or the defaults (create). */
function merged(body: Partial<Static<typeof CreateBody>>, base: CheckFields, serviceRegion: string): CheckFields {
  const rule = body.alertRule ?? {}
  return {
    name: body.name?.trim() ?? base.name,
    kind: body.kind ?? base.kind,
    request: (body.request as Json | undefined) ?? base.request,
    frequencySeconds: body.frequencySeconds ?? base.frequencySeconds,
    timeoutMs: body.timeoutMs ?? base.timeoutMs,
    degradedMs: body.degradedMs === undefined ? base.degradedMs : body.degradedMs,
    regions: body.regions ?? (base.regions.length ? base.regions : [serviceRegion]),
    retries: body.retries ?? base.retries,
    alertAfterFailures: rule.failures ?? base.alertAfterFailures,
    alertQuorum: rule.quorum ?? base.alertQuorum,
    alertPriority: rule.priority ?? base.alertPriority,
    escalationPolicyId: rule.escalationPolicyId === undefined ? base.escalationPolicyId : rule.escalationPolicyId,
    statusComponentIds: body.statusComponentIds ?? base.statusComponentIds,
    paused: body.paused ?? base.paused,
    service: body.service === undefined ? base.service : (body.service?.trim() ?? null),
  }
}

const fieldsOf = (row: CheckRow): CheckFields => ({
  name: row.name,
  kind: row.kind,
  request: row.request,
  frequencySeconds: row.frequencySeconds,
  timeoutMs: row.timeoutMs,
  degradedMs: row.degradedMs,
  regions: row.regions,
  retries: row.retries,
  alertAfterFailures: row.alertAfterFailures,
  alertQuorum: row.alertQuorum,
  alertPriority: row.alertPriority,
  escalationPolicyId: row.escalationPolicyId,
  statusComponentIds: row.statusComponentIds,
  paused: row.paused,
  service: row.service,
})

/**
 * Synthetic checks (issue 16): reading needs synthetics viewer, changing synthetics manager.
 * A change reschedules the check from now; pausing stops its runs, resuming runs it at once.
 */
export const checkRoutes: FastifyPluginAsyncTypebox<CheckRouteOptions> = async (app, options) => {
  const db = app.database.db
  const { scheduler, serviceRegion } = options
  const viewer = app.requireProductRole('synthetics', 'viewer')
  const manager = app.requireProductRole('synthetics', 'manager')
  const context = (executor: Executor, organizationId: string, checkId?: string): DefinitionContext => ({
    db: executor,
    organizationId,
    serviceRegion,
    serviceHasBrowser: options.browser !== undefined,
    browserRunsPerMonth: options.browserRunsPerMonth,
    ...(checkId ? { checkId } : {}),
    policy: options.policy,
    unknownComponents: options.unknownComponents,
    policyExists: options.policyExists,
  })
  const heartbeatUrlOf = (token: string) => `${options.productUrl}/api/v1/synthetics/heartbeats/${token}`
  const withStates = async (organizationId: string, rows: CheckRow[]) => {
    const judged = await judgementsOf(db, organizationId, rows, serviceRegion)
    return rows.map((row) => checkBody(row, judged(row.id)))
  }

  app.get(
    `${MANAGED_BASE}/checks`,
    {
      schema: {
        tags,
        summary: 'List checks (synthetics viewer)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(Check) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { page, limit } = request.query
      const { rows, total } = await listChecks(db, organizationId, pageOf({ page, limit }))
      return { data: await withStates(organizationId, rows), meta: { page, limit, total } }
    },
  )

  app.get(
    `${MANAGED_BASE}/checks/:checkId`,
    {
      schema: { tags, summary: 'A check with each region’s status (synthetics viewer)', params: CheckParams, response: { 200: Check } },
      onRequest: viewer,
    },
    async (request) => {
      const check = await checkOfRequest(db, request)
      const [body] = await withStates(check.organizationId, [check])
      return body!
    },
  )

  app.post(
    `${MANAGED_BASE}/checks`,
    {
      schema: {
        tags,
        summary: 'Create a check (synthetics manager); it runs at once unless paused',
        params: OrgParams,
        body: CreateBody,
        response: { 201: Check },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const defaults: CheckFields = {
        name: '',
        kind: request.body.kind,
        request: {},
        frequencySeconds: request.body.frequencySeconds,
        timeoutMs: DEFAULT_TIMEOUT_MS[request.body.kind],
        degradedMs: null,
        regions: [],
        retries: 0,
        alertAfterFailures: 1,
        alertQuorum: 'any',
        alertPriority: 'P2',
        escalationPolicyId: null,
        statusComponentIds: [],
        paused: false,
        service: null,
      }
      const fields = merged(
        request.body,
        { ...defaults, timeoutMs: Math.min(DEFAULT_TIMEOUT_MS[request.body.kind], request.body.frequencySeconds * 1000 - 1) },
        serviceRegion,
      )
      const valid = await checkDefinition(fields, context(db, organizationId))
      const token = valid.kind === 'heartbeat' ? newHeartbeatToken() : undefined
      const created = await db.transaction().execute(async (trx) => {
        const nextDueAt = valid.paused ? null : firstDueAt(valid)
        const row = await insertCheck(trx, organizationId, valid, {
          nextDueAt,
          heartbeatTokenHash: token ? hashToken(token) : null,
          createdBy: request.user.userId,
        })
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'check', row.id),
          action: 'check.created',
          after: audited(row),
        })
        await trackProductEvent(trx, {
          organizationId,
          name: 'Check Created',
          userId: request.user.userId,
          properties: { checkId: row.id, kind: row.kind },
        })
        return row
      })
      // A check due at once is taken now rather than at the runner's next tick.
      scheduler.wake()
      const [body] = await withStates(organizationId, [created])
      return reply.code(201).send({ ...body!, ...(token ? { heartbeatUrl: heartbeatUrlOf(token) } : {}) })
    },
  )

  // A push URL that leaked (a log, a shared crontab) is replaced without losing the check's history.
  app.post(
    `${MANAGED_BASE}/checks/:checkId/heartbeat-url`,
    {
      schema: {
        tags,
        summary: 'Replace a heartbeat check’s push URL (synthetics manager); the new one is shown once, the old one stops working',
        params: CheckParams,
        response: { 200: Check },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const token = newHeartbeatToken()
      const updated = await db.transaction().execute(async (trx) => {
        const check = await checkOfRequest(trx, request, true)
        if ((check.kind as CheckKind) !== 'heartbeat') throw new BadRequestError('kind: only a heartbeat check has a push URL')
        const row = await replaceHeartbeatToken(trx, organizationId, check.id, hashToken(token))
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'check', row.id),
          action: 'check.heartbeat_url_replaced',
        })
        return row
      })
      const [body] = await withStates(organizationId, [updated])
      return { ...body!, heartbeatUrl: heartbeatUrlOf(token) }
    },
  )

  app.patch(
    `${MANAGED_BASE}/checks/:checkId`,
    {
      schema: {
        tags,
        summary: 'Change a check (synthetics manager); its kind stays; it is rescheduled from now',
        params: CheckParams,
        body: Kindless,
        response: { 200: Check },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const updated = await db.transaction().execute(async (trx) => {
        const before = await checkOfRequest(trx, request, true)
        const valid = await checkDefinition(merged(request.body, fieldsOf(before), serviceRegion), context(trx, organizationId, before.id))
        const nextDueAt = valid.paused ? null : valid.kind === 'heartbeat' ? (before.nextDueAt ?? firstDueAt(valid)) : new Date()
        const row = await updateCheck(trx, organizationId, before.id, { ...valid, nextDueAt })
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'check', row.id),
          action: 'check.updated',
          before: audited(before),
          after: audited(row),
        })
        return row
      })
      scheduler.wake()
      const [body] = await withStates(organizationId, [updated])
      return body!
    },
  )

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    app.post(
      `${MANAGED_BASE}/checks/:checkId/${action}`,
      {
        schema: {
          tags,
          summary: paused
            ? 'Pause a check: no runs, no alerts (synthetics manager)'
            : 'Resume a paused check: it runs at once (synthetics manager)',
          params: CheckParams,
          response: { 200: Check },
        },
        onRequest: manager,
      },
      async (request) => {
        const { organizationId } = membershipOf(request)
        const updated = await db.transaction().execute(async (trx) => {
          const before = await checkOfRequest(trx, request, true)
          if (before.paused === paused) return before
          if (!paused) await checkBrowserBudget({ ...fieldsOf(before), paused }, context(trx, organizationId, before.id))
          const nextDueAt = paused ? null : firstDueAt(fieldsOf(before))
          const row = await updateCheck(trx, organizationId, before.id, { paused, nextDueAt })
          await recordAudit(trx, auditContextOf(request), {
            ...auditEntry(organizationId, 'check', row.id),
            action: `check.${action}d`,
            after: audited(row),
          })
          return row
        })
        if (!paused) scheduler.wake()
        const [body] = await withStates(organizationId, [updated])
        return body!
      },
    )
  }

  app.delete(
    `${MANAGED_BASE}/checks/:checkId`,
    {
      schema: {
        tags,
        summary: 'Delete a check with its results (synthetics manager)',
        params: CheckParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const row = await checkOfRequest(trx, request, true)
        await deleteCheck(trx, organizationId, row.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'check', row.id),
          action: 'check.deleted',
          before: audited(row),
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    `${MANAGED_BASE}/checks/:checkId/run`,
    {
      schema: {
        tags,
        summary: 'Run a check once now from this service’s region and answer the result (synthetics manager); a test run, not stored',
        params: CheckParams,
        response: { 200: RunNow },
      },
      onRequest: manager,
    },
    async (request) => {
      const check = await checkOfRequest(db, request)
      if ((check.kind as CheckKind) === 'heartbeat')
        throw new BadRequestError('kind: a heartbeat check is run by its pings, not by the service')
      let runnable: RunnableCheck
      try {
        runnable = await runnableCheck(db, options.sealer, check)
      } catch (error) {
        // A secret that is gone (or no key to open it) fails the run, as it would on schedule.
        return { ...failedRun((error as Error).message), region: serviceRegion }
      }
      return { ...(await runCheck(runnable, options.policy, options.browser)), region: serviceRegion }
    },
  )
}
