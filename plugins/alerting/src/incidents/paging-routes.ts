import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { auditContextOf } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { invalidField } from '@svc/http'
import { fullIncidentBody, incidentOrNotFound } from './common.js'
import { snoozeIncident } from './operations.js'
import { Incident, IncidentParams, SnoozeIncident } from './schemas.js'

const tags = ['incidents']
const base = '/api/v1/organizations/:orgId/incidents'
const WEEK_MS = 7 * 24 * 60 * 60_000

/**
 * Paging an incident's people again (decision 0019, "Paging again"): snoozing it. Working an
 * incident needs alerting responder; changes are audited and on its timeline.
 */
export const incidentPagingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const responder = app.requireProductRole('alerting', 'responder')

  app.post(
    `${base}/:incidentId/snooze`,
    {
      schema: {
        tags,
        summary: 'Snooze an acknowledged incident: its alerts page again when the snooze ends (alerting responder)',
        description:
          'Give `minutes` from now or `until` (within a week). The acknowledged alerts of the incident whose policy pages are paged again then, from the first step, and the incident goes back to triage; resolving it first cancels that. 409 in triage, when resolved, or when none of its alerts would page anyone.',
        params: IncidentParams,
        body: SnoozeIncident,
        response: { 200: Incident },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const now = Date.now()
      const until = request.body.until ? new Date(request.body.until) : new Date(now + (request.body.minutes ?? 0) * 60_000)
      if (until.getTime() <= now) throw invalidField('until', 'is not in the future')
      if (until.getTime() > now + WEEK_MS) throw invalidField('until', 'is more than a week away')
      const actor = { userId: request.user.userId, audit: auditContextOf(request) }
      return db.transaction().execute(async (trx) => {
        await snoozeIncident(trx, actor, organizationId, request.params.incidentId, until)
        return fullIncidentBody(trx, organizationId, await incidentOrNotFound(trx, organizationId, request.params.incidentId))
      })
    },
  )
}
