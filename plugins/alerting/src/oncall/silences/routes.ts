import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, invalidField } from '@svc/http'
import { scheduleSilenceEnd } from './ending.js'
import type { Matchers } from '../policies/routing.js'
import { deleteSilence, findSilence, insertSilence, listSilences, updateSilence, type SilenceRow } from './queries.js'
import { CreateSilence, Silence, SilenceParams, SilenceQuery, UpdateSilence } from './schemas.js'

const tags = ['silences']
const OrgParams = Type.Object({ orgId: Type.String() })

function stateOf(row: SilenceRow, now: Date) {
  return row.startsAt > now ? ('pending' as const) : row.endsAt > now ? ('active' as const) : ('expired' as const)
}

function silenceBody(row: SilenceRow, now = new Date()) {
  return {
    id: row.id,
    comment: row.comment,
    // Written only from the validated request body.
    matchers: row.matchers as Matchers,
    startsAt: row.startsAt.toISOString(),
    endsAt: row.endsAt.toISOString(),
    state: stateOf(row, now),
    createdBy: row.createdBy,
    statusMaintenanceId: row.statusMaintenanceId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

const audited = (row: SilenceRow) => ({
  comment: row.comment,
  matchers: row.matchers,
  startsAt: row.startsAt.toISOString(),
  endsAt: row.endsAt.toISOString(),
})

export interface SilenceOptions {
  /** Lets the escalator let go of a silence's alerts at once (after an early end commits). */
  silenceEnded: () => void
}

/**
 * Silences, as Alertmanager has them: while one is in force, matching alerts are stored
 * and shown but page no one. When it ends, early or on time, the alerts it held that are still
 * open and unacknowledged start their escalation once (paging/escalator.ts). Reading needs
 * alerting viewer, changing alerting manager; changes are audited.
 */
export const silenceRoutes: FastifyPluginAsyncTypebox<SilenceOptions> = async (app, { silenceEnded }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const silenceOf = async (executor: Executor, organizationId: string, silenceId: string, forUpdate = false) => {
    const row = isUuid(silenceId) ? await findSilence(executor, organizationId, silenceId, forUpdate) : undefined
    if (!row) throw new NotFoundError('silence')
    return row
  }
  const entry = (organizationId: string, silenceId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'silence',
    entityId: silenceId,
  })

  app.get(
    '/api/v1/organizations/:orgId/silences',
    {
      schema: {
        tags,
        summary: 'List silences, latest ending first (alerting viewer)',
        params: OrgParams,
        querystring: SilenceQuery,
        response: { 200: ListResponse(Silence) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, state } = request.query
      const now = new Date()
      const { rows, total } = await listSilences(db, membershipOf(request).organizationId, state, now, pageOf({ page, limit }))
      return { data: rows.map((row) => silenceBody(row, now)), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/silences/:silenceId',
    { schema: { tags, summary: 'A silence (alerting viewer)', params: SilenceParams, response: { 200: Silence } }, onRequest: viewer },
    async (request) => silenceBody(await silenceOf(db, membershipOf(request).organizationId, request.params.silenceId)),
  )

  app.post(
    '/api/v1/organizations/:orgId/silences',
    {
      schema: {
        tags,
        summary: 'Silence matching alerts for a while (alerting manager)',
        description:
          'New alerts that match, and escalating ones at their next step, page no one until it ends. At least one matcher; endsAt in the future and after startsAt.',
        params: OrgParams,
        body: CreateSilence,
        response: { 201: Silence },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const now = new Date()
      const startsAt = request.body.startsAt ? new Date(request.body.startsAt) : now
      const endsAt = new Date(request.body.endsAt)
      if (endsAt <= now) throw invalidField('endsAt', 'must be in the future')
      if (endsAt <= startsAt) throw invalidField('endsAt', 'must be after startsAt')
      const created = await db.transaction().execute(async (trx) => {
        const silence = await insertSilence(trx, {
          organizationId,
          comment: request.body.comment.trim(),
          matchers: request.body.matchers,
          startsAt,
          endsAt,
          createdBy: request.user.userId,
        })
        await scheduleSilenceEnd(app.jobs, trx, silence.id, endsAt)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, silence.id),
          action: 'silence.created',
          after: audited(silence),
        })
        return silence
      })
      return reply.code(201).send(silenceBody(created, now))
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/silences/:silenceId',
    {
      schema: {
        tags,
        summary: 'Change a silence: extend or shorten it, or change what it matches (alerting manager)',
        description: 'An expired silence cannot be changed (409). Ending it now or earlier lets go of its alerts at that time.',
        params: SilenceParams,
        body: UpdateSilence,
        response: { 200: Silence },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const now = new Date()
      const updated = await db.transaction().execute(async (trx) => {
        const before = await silenceOf(trx, organizationId, request.params.silenceId, true)
        if (before.endsAt <= now) throw new ConflictError('the silence has expired: create a new one')
        if (before.statusMaintenanceId)
          throw new ConflictError('the silence belongs to a status page maintenance: move or end the maintenance instead')
        const startsAt = request.body.startsAt ? new Date(request.body.startsAt) : before.startsAt
        const endsAt = request.body.endsAt ? new Date(request.body.endsAt) : before.endsAt
        if (endsAt <= startsAt) throw invalidField(request.body.endsAt ? 'endsAt' : 'startsAt', 'must leave endsAt after startsAt')
        const after = await updateSilence(trx, organizationId, before.id, {
          ...(request.body.comment ? { comment: request.body.comment.trim() } : {}),
          ...(request.body.matchers ? { matchers: request.body.matchers } : {}),
          startsAt,
          endsAt,
        })
        if (!after) throw new NotFoundError('silence')
        // The job for the old end finds the silence still in force and does nothing; this one lets go.
        if (after.endsAt.getTime() !== before.endsAt.getTime() || request.body.matchers) {
          await scheduleSilenceEnd(app.jobs, trx, after.id, after.endsAt < now ? now : after.endsAt)
        }
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'silence.updated',
          before: audited(before),
          after: audited(after),
        })
        return after
      })
      if (updated.endsAt <= new Date()) silenceEnded()
      return silenceBody(updated)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/silences/:silenceId',
    {
      schema: {
        tags,
        summary: 'Delete a silence; the alerts it held that are still open and unacknowledged start escalating (alerting manager)',
        params: SilenceParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const removed = isUuid(request.params.silenceId) ? await deleteSilence(trx, organizationId, request.params.silenceId) : undefined
        if (!removed) throw new NotFoundError('silence')
        await scheduleSilenceEnd(app.jobs, trx, removed.id, new Date())
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, removed.id),
          action: 'silence.deleted',
          before: audited(removed),
        })
      })
      silenceEnded()
      return reply.code(204).send(null)
    },
  )
}
