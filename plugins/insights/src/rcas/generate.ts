import type { AiConfig } from '@svc/config'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { inTransaction } from '@svc/jobs'
import { BudgetExceededError, ConflictError } from '@svc/http'
import { listLinks, queueDraft } from '../queries/rcas.js'
import { limitReachedNow } from '../usage/budget.js'
import { NOTHING_LINKED } from './draft-context.js'
import { DRAFT_QUEUE, type DraftJob } from './draft-worker.js'
import { assertEditable, rcaOf, tags } from './routes.js'
import { Rca, RcaParams, rcaBody } from './schemas.js'

/**
 * `POST …/rcas/:rcaId/generate`: queues an AI draft of the document (insights responder). The
 * job writes summary, root cause, impact and timeline from the linked incidents, their analyses,
 * the deploys before them and alike past incidents; fields a person wrote are kept unless
 * `overwrite` is true.
 */
export const rcaGenerateRoutes: FastifyPluginAsyncTypebox<{ ai: AiConfig; wakeWorker: () => void }> = async (app, options) => {
  const db = app.database.db
  app.post(
    '/api/v1/organizations/:orgId/rcas/:rcaId/generate',
    {
      schema: {
        tags,
        summary: 'Generate an AI draft of an RCA (insights responder)',
        description:
          'Answers 202 with the document, `draftStatus: queued`; poll it until `completed` or `failed`. 409 when no incident is linked (the message says what to link), while a draft is queued or running, or once published; 402 BUDGET_EXCEEDED when the AI budget is spent.',
        params: RcaParams,
        body: Type.Object(
          { overwrite: Type.Boolean({ default: false, description: 'Replace the sections a person wrote too' }) },
          { additionalProperties: false, description: 'Optional: a POST with no body drafts without overwriting' },
        ),
        response: { 202: Rca },
      },
      // No body is the common call: it means `{}`.
      preValidation: async (request) => {
        request.body ??= { overwrite: false }
      },
      onRequest: app.requireProductRole('insights', 'responder'),
    },
    async (request, reply) => {
      const { overwrite } = request.body
      const row = await db.transaction().execute(async (trx) => {
        const rca = await rcaOf(trx, request, request.params.rcaId, { lock: true })
        assertEditable(rca, 'it')
        if ((await listLinks(trx, rca.organizationId, rca.id)).length === 0) throw new ConflictError(NOTHING_LINKED)
        const limit = await limitReachedNow(trx, options.ai, rca.organizationId)
        if (limit) throw new BudgetExceededError(`the organization's monthly AI ${limit} limit is reached`)
        const queued = await queueDraft(trx, rca.organizationId, rca.id, overwrite, request.user.userId)
        if (!queued) throw new ConflictError('a draft of this RCA is already being generated')
        const job: DraftJob = { organizationId: rca.organizationId, rcaId: rca.id }
        await app.jobs.send(DRAFT_QUEUE, job, { db: inTransaction(trx) })
        return queued
      })
      options.wakeWorker()
      return reply.code(202).send(rcaBody(row))
    },
  )
}
