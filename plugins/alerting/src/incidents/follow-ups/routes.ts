import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { NotFoundError } from '@svc/http'
import { incidentAudit, incidentOrNotFound, timelineEntry } from '../common.js'
import { IncidentParams } from '../schemas.js'
import { addTimeline } from '../queries.js'
import { addFollowUp, followUpBody } from './operations.js'
import { findFollowUp, listFollowUps, updateFollowUp } from './queries.js'
import { CreateFollowUp, FollowUp, FollowUpParams, UpdateFollowUp } from './schemas.js'

const tags = ['incidents']
const base = '/api/v1/organizations/:orgId/incidents/:incidentId/follow-ups'

/**
 * An incident's follow-ups (decision 0031, "Follow-ups in trackers"): what is left to do after
 * it, each optionally a ticket in a tracker of the organization, whose status comes back by the
 * tracker's webhook. Reading needs alerting viewer, adding and changing alerting responder.
 */
export const followUpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const responder = app.requireProductRole('alerting', 'responder')

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'The incident’s follow-ups, oldest first, with their tickets (alerting viewer)',
        params: IncidentParams,
        response: { 200: Type.Object({ data: Type.Array(FollowUp) }) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      return { data: (await listFollowUps(db, organizationId, incident.id)).map((row) => followUpBody(row, incident.id)) }
    },
  )

  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Add a follow-up to the incident, optionally as a ticket in a tracker (alerting responder)',
        description:
          'With `trackerId` the ticket is created after the answer (`syncStatus: pending`), tried again with backoff while the tracker does not answer; the incident is never held up by it.',
        params: IncidentParams,
        body: CreateFollowUp,
        response: { 201: FollowUp },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { title, description = null, trackerId = null } = request.body
      const actor = { userId: request.user.userId, audit: auditContextOf(request) }
      const row = await db
        .transaction()
        .execute((trx) => addFollowUp(trx, app.jobs, actor, organizationId, request.params.incidentId, { title, description, trackerId }))
      return reply.code(201).send(followUpBody(row, row.incidentId ?? request.params.incidentId))
    },
  )

  app.patch(
    `${base}/:followUpId`,
    {
      schema: {
        tags,
        summary: 'Change a follow-up’s title, description or status (alerting responder)',
        description: 'Its ticket is not changed in the tracker; the tracker’s changes to the ticket come back here.',
        params: FollowUpParams,
        body: UpdateFollowUp,
        response: { 200: FollowUp },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const updated = await db.transaction().execute(async (trx) => {
        const incident = await incidentOrNotFound(trx, organizationId, request.params.incidentId)
        const before = isUuid(request.params.followUpId)
          ? await findFollowUp(trx, organizationId, request.params.followUpId, true)
          : undefined
        if (!before || before.incidentId !== incident.id) throw new NotFoundError('follow-up')
        const { title, ...rest } = request.body
        const row = await updateFollowUp(trx, organizationId, before.id, { ...rest, ...(title ? { title: title.trim() } : {}) })
        if (rest.status && rest.status !== before.status)
          await addTimeline(trx, [
            timelineEntry(organizationId, incident.id, request.user.userId, 'follow_up_updated', {
              followUpId: row.id,
              status: rest.status,
            }),
          ])
        const { context, entry } = incidentAudit(request, organizationId, incident.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'incident.follow_up_updated',
          before: { followUpId: before.id, title: before.title, status: before.status },
          after: { followUpId: row.id, title: row.title, status: row.status },
        })
        return followUpBody(row, incident.id)
      })
      return updated
    },
  )
}
