import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { isUuid } from '@svc/auth'
import { publish } from '@svc/events'
import type { SecretSealer } from '@svc/config'
import { NotFoundError, UnauthorizedError, BadRequestError } from '@svc/http'
import { openTrackerValue, ticketEventOf, trackerForEvents, trackerSignatureHolds } from '../../destinations/index.js'
import { timelineEntry } from '../common.js'
import { addTimeline } from '../queries.js'
import { followUpOfTicket, updateFollowUp } from './queries.js'

/** Tracker events are ticket changes: a megabyte is far above one. */
const BODY_LIMIT = 1_048_576

/**
 * Where a tracker's webhook sends ticket changes (decision 0031): public, the tracker's signature
 * over the raw body proving the sender (401 otherwise). A change of a ticket a follow-up has
 * sets its status as the tracker names it, and the follow-up done when the tracker counts the
 * ticket done (open again when reopened), and publishes `ticket.status_changed` (an RCA action
 * item's ticket moves its item); anything else is acknowledged and ignored (204).
 */
export const trackerEventRoutes: FastifyPluginAsyncTypebox<{ sealer: SecretSealer }> = async (app, { sealer }) => {
  const db = app.database.db
  // The signature is over the bytes as sent: the body is kept raw and parsed after it holds.
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body))

  app.post(
    '/api/v1/trackers/:trackerId/events',
    {
      config: { public: true },
      schema: {
        tags: ['trackers'],
        summary: 'A tracker’s webhook: a ticket changed (signed by the tracker)',
        description:
          'Jira Cloud: `X-Hub-Signature: sha256=<HMAC of the body>` with the tracker’s webhook secret. Linear: `Linear-Signature`, with `webhookTimestamp` within a minute. 401 when the signature does not hold.',
        params: Type.Object({ trackerId: Type.String() }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const tracker = isUuid(request.params.trackerId) ? await trackerForEvents(db, request.params.trackerId) : undefined
      if (!tracker) throw new NotFoundError('tracker')
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      const secret = openTrackerValue(sealer, tracker.organizationId, tracker.id, 'webhookSecret', tracker.webhookSecret)
      const kind = tracker.kind as 'jira' | 'linear'
      if (!trackerSignatureHolds(kind, secret, raw, request.headers)) throw new UnauthorizedError('the tracker’s signature does not hold')
      let parsed: unknown
      try {
        parsed = JSON.parse(raw.toString('utf8'))
      } catch {
        throw new BadRequestError('the body is not JSON')
      }
      const event = ticketEventOf(kind, parsed)
      if (!event) return reply.code(204).send(null)
      await db.transaction().execute(async (trx) => {
        const followUp = await followUpOfTicket(trx, tracker.organizationId, tracker.id, event.ticketId)
        if (!followUp) return
        const status = event.done ? 'done' : 'open'
        if (followUp.ticketStatus === event.status && followUp.status === status) return
        await updateFollowUp(trx, tracker.organizationId, followUp.id, { ticketStatus: event.status, status })
        if (followUp.incidentId)
          await addTimeline(trx, [
            timelineEntry(tracker.organizationId, followUp.incidentId, null, 'follow_up_updated', {
              followUpId: followUp.id,
              ticket: event.key,
              ticketStatus: event.status,
              status,
              via: kind,
            }),
          ])
        // Whoever keeps what the ticket stands for follows it (insights moves an RCA action item).
        await publish(app.jobs, trx, 'ticket.status_changed', {
          organizationId: tracker.organizationId,
          followUpId: followUp.id,
          incidentId: followUp.incidentId,
          rcaActionItemId: followUp.rcaActionItemId,
          ticketKey: event.key,
          ticketStatus: event.status,
          done: event.done,
        })
      })
      return reply.code(204).send(null)
    },
  )
}
