import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AttemptResult, CHECK_KINDS, RESULT_STATUSES, type RunnableCheck } from '@svc/check-runner'
import { BadRequestError, ConflictError, UnauthorizedError } from '@svc/http'
import { checkById } from '../queries/checks.js'
import { recordRelayBrowser, relayByKey } from '../queries/relays.js'
import { leaseRelayRuns, runsLeasedBy, type RunResult } from '../queries/runs.js'
import { failedRun, type Scheduler } from '../scheduling/scheduler.js'
import { runnableCheck } from '../secrets/resolve.js'
import type { SecretSealer } from '@svc/config'
import { hashRelayKey } from './routes.js'

export const RELAY_BASE = '/api/v1/synthetics/relay'
/** A batch of results with screenshots in it; relays send batches of at most half this (services/relay). */
export const RESULTS_BODY_LIMIT = 32 * 1024 * 1024
const tags = ['synthetics-relay']

interface AuthenticatedRelay {
  id: string
  organizationId: string
  name: string
  regions: string[]
  heartbeatSeconds: number
  /** It said it has Chromium when it last heartbeated. */
  browser: boolean
}

const relays = new WeakMap<FastifyRequest, AuthenticatedRelay>()

const RelayHeaders = Type.Object({
  authorization: Type.String({ description: 'Bearer <RELAY_KEY>' }),
  'x-relay-version': Type.Optional(Type.String({ maxLength: 50 })),
})

const Leased = Type.Object({
  runId: Type.String({ format: 'uuid' }),
  checkId: Type.String({ format: 'uuid' }),
  region: Type.String(),
  dueAt: Type.String({ format: 'date-time' }),
  check: Type.Object({
    kind: Type.Enum(CHECK_KINDS.filter((kind) => kind !== 'heartbeat')),
    request: Type.Record(Type.String(), Type.Unknown(), { description: 'The request, its secrets filled in' }),
    timeoutMs: Type.Integer(),
    degradedMs: Type.Union([Type.Integer(), Type.Null()]),
    retries: Type.Integer(),
  }),
})

const ResultItem = Type.Object(
  {
    id: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The relay’s own id for this result: a result sent twice is recorded once',
    }),
    runId: Type.String({ format: 'uuid' }),
    status: Type.Enum(RESULT_STATUSES),
    attempts: Type.Array(AttemptResult, { minItems: 1, maxItems: 6 }),
  },
  { additionalProperties: false },
)

/**
 * The relays' own API: a relay authenticates with its key (every call is also a heartbeat),
 * leases due runs of its regions, and posts results in batches with idempotent ids.
 */
export const relayApi: FastifyPluginAsyncTypebox<{ scheduler: Scheduler; sealer: SecretSealer }> = async (app, options) => {
  const db = app.database.db

  /** The access rule of every relay route: a relay's key. */
  async function relayKey(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization ?? ''
    const key = header.startsWith('Bearer ') ? header.slice(7).trim() : ''
    const version = request.headers['x-relay-version']
    const relay = key ? await relayByKey(db, hashRelayKey(key), typeof version === 'string' ? version.slice(0, 50) : undefined) : undefined
    if (!relay) throw new UnauthorizedError('a valid relay key is required')
    relays.set(request, relay)
  }
  const relayOf = (request: FastifyRequest) => relays.get(request)!

  app.post(
    `${RELAY_BASE}/heartbeat`,
    {
      schema: {
        tags,
        summary: 'A relay reports it is alive and what it can run; answers its regions and heartbeat period',
        headers: RelayHeaders,
        body: Type.Optional(
          Type.Object(
            {
              browser: Type.Optional(
                Type.Boolean({ description: 'It has Chromium: browser checks may be leased to it. Unsaid: it has not' }),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 200: Type.Object({ relayId: Type.String(), regions: Type.Array(Type.String()), heartbeatSeconds: Type.Integer() }) },
      },
      // Not a person's token: the relay's key is checked by its own access rule.
      config: { public: true },
      onRequest: relayKey,
    },
    async (request) => {
      const relay = relayOf(request)
      await recordRelayBrowser(db, relay.id, request.body?.browser ?? false)
      return { relayId: relay.id, regions: relay.regions, heartbeatSeconds: relay.heartbeatSeconds }
    },
  )

  app.post(
    `${RELAY_BASE}/lease`,
    {
      schema: {
        tags,
        summary: 'Lease due runs of the relay’s regions (each until its timeout × attempts + 30 s)',
        headers: RelayHeaders,
        body: Type.Object({ max: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, { additionalProperties: false }),
        response: { 200: Type.Object({ runs: Type.Array(Leased) }) },
      },
      // Not a person's token: the relay's key is checked by its own access rule.
      config: { public: true },
      onRequest: relayKey,
    },
    async (request) => {
      const relay = relayOf(request)
      const leased = await leaseRelayRuns(db, relay, request.body.max ?? 20)
      const runs = []
      for (const run of leased) {
        const check = await checkById(db, run.checkId)
        if (!check) continue
        let runnable: RunnableCheck
        try {
          runnable = await runnableCheck(db, options.sealer, check)
        } catch (error) {
          // A run whose secrets cannot be filled in fails here, with the reason, rather than on the relay.
          await db.transaction().execute((trx) => options.scheduler.record(trx, run.id, failedRun((error as Error).message)))
          continue
        }
        runs.push({
          runId: run.id,
          checkId: run.checkId,
          region: run.region,
          dueAt: new Date(run.dueAt).toISOString(),
          check: { ...runnable, request: runnable.request as unknown as Record<string, unknown> },
        })
      }
      return { runs }
    },
  )

  app.post(
    `${RELAY_BASE}/results`,
    {
      schema: {
        tags,
        summary:
          'Record results of leased runs; a result id sent again is ignored, a run the relay did not lease is 409. Up to 32 MB: a browser check’s attempts carry their screenshots',
        headers: RelayHeaders,
        body: Type.Object({ results: Type.Array(ResultItem, { minItems: 1, maxItems: 100 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ recorded: Type.Integer(), duplicates: Type.Integer() }) },
      },
      // Not a person's token: the relay's key is checked by its own access rule.
      config: { public: true },
      onRequest: relayKey,
      bodyLimit: RESULTS_BODY_LIMIT,
    },
    async (request) => {
      const relay = relayOf(request)
      const { results } = request.body
      const ids = results.map((result) => result.id)
      const repeated = ids.findIndex((id, index) => ids.indexOf(id) !== index)
      if (repeated >= 0) throw new BadRequestError(`results/${repeated}/id: ${ids[repeated]} appears twice in the batch`)
      return db.transaction().execute(async (trx) => {
        const held = new Map(
          (
            await runsLeasedBy(
              trx,
              relay.id,
              results.map((result) => result.runId),
            )
          ).map((run) => [run.id, run]),
        )
        const recording = new Map<string, RunResult>()
        let accepted = 0
        let duplicates = 0
        for (const [index, result] of results.entries()) {
          const run = held.get(result.runId)
          if (run?.state === 'done' && run.resultId === result.id) {
            duplicates += 1
            continue
          }
          if (!run || run.state !== 'leased')
            throw new ConflictError(
              `results/${index}/runId: run ${result.runId} is not leased by this relay${run ? ` (it is ${run.state})` : ''}`,
            )
          accepted += 1
          // A second result for one run in a batch changes nothing: the first is the run's, as when sent apart.
          if (!recording.has(run.id))
            recording.set(run.id, { runId: run.id, status: result.status, attempts: result.attempts, resultId: result.id })
        }
        await options.scheduler.recordResults(trx, [...recording.values()])
        return { recorded: accepted, duplicates }
      })
    },
  )
}
