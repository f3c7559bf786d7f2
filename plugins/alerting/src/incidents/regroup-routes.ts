import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { ConflictError, invalidField } from '@svc/http'
import { fullIncidentBody, incidentAudit, incidentOrNotFound, timelineEntry } from './common.js'
import {
  addTimeline,
  assignRole,
  excludeFingerprints,
  insertIncident,
  linkedAlerts,
  markMerged,
  moveLinks,
  updateIncident,
} from './queries.js'
import { Incident, IncidentParams, MergeIncident, SplitIncident } from './schemas.js'
import { requireSeverity } from './shaping/severities.js'

const tags = ['incidents']
const base = '/api/v1/organizations/:orgId/incidents/:incidentId'

/**
 * People regroup what correlation grouped (decision 0019, "Merge and split"): merging moves
 * another incident's alerts into this one and resolves it; splitting moves alerts out into a new
 * incident, and correlation never puts their fingerprints back in this one. Both are audited on
 * both incidents and written on both timelines (alerting responder).
 */
export const regroupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const responder = app.requireProductRole('alerting', 'responder')

  app.post(
    `${base}/merge`,
    {
      schema: {
        tags,
        summary: 'Merge another incident into this one (alerting responder)',
        description:
          'Its alerts move here (their links keep the rule that grouped them and name the incident they came from); it is resolved with `mergedInto` set. Both must be of the organization (404); this one must be open and the other not merged already (409).',
        params: IncidentParams,
        body: MergeIncident,
        response: { 200: Incident },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const author = request.user.userId
      return db.transaction().execute(async (trx) => {
        if (request.body.incidentId === request.params.incidentId) throw invalidField('incidentId', 'is this incident')
        // Locked in id order, so two merges of the same pair in opposite directions cannot deadlock.
        const [first, second] = [request.params.incidentId, request.body.incidentId].sort()
        const locked = new Map([
          [first!, await incidentOrNotFound(trx, organizationId, first!, true)],
          [second!, await incidentOrNotFound(trx, organizationId, second!, true)],
        ])
        const target = locked.get(request.params.incidentId)!
        const source = locked.get(request.body.incidentId)!
        if (target.status === 'resolved') throw new ConflictError('this incident is resolved: reopen it before merging into it')
        if (source.mergedInto) throw new ConflictError(`INC-${source.number} was merged already`)
        const moved = await moveLinks(trx, organizationId, source.id, target.id, { mergedFrom: source.id })
        await markMerged(trx, organizationId, source.id, target.id)
        await updateIncident(trx, organizationId, target.id, {})
        await addTimeline(trx, [
          timelineEntry(organizationId, target.id, author, 'merged', {
            incidentId: source.id,
            reference: `INC-${source.number}`,
            alertIds: moved,
          }),
          timelineEntry(organizationId, source.id, author, 'merged_into', { incidentId: target.id, reference: `INC-${target.number}` }),
        ])
        const onTarget = incidentAudit(request, organizationId, target.id)
        await recordAudit(trx, onTarget.context, {
          ...onTarget.entry,
          action: 'incident.merged',
          after: { mergedFrom: source.id, alertIds: moved },
        })
        const onSource = incidentAudit(request, organizationId, source.id)
        await recordAudit(trx, onSource.context, {
          ...onSource.entry,
          action: 'incident.merged_into',
          before: { status: source.status },
          after: { status: 'resolved', mergedInto: target.id },
        })
        return fullIncidentBody(trx, organizationId, await incidentOrNotFound(trx, organizationId, target.id))
      })
    },
  )

  app.post(
    `${base}/split`,
    {
      schema: {
        tags,
        summary: 'Split alerts out of this incident into a new one (alerting responder)',
        description:
          'The new incident starts in triage with the caller as commander and this one’s severity unless given; each alert must be in this incident (400 naming it). Correlation never puts these alerts’ fingerprints back in this incident.',
        params: IncidentParams,
        body: SplitIncident,
        response: { 201: Incident },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const author = request.user.userId
      const { alertIds, title } = request.body
      const created = await db.transaction().execute(async (trx) => {
        const source = await incidentOrNotFound(trx, organizationId, request.params.incidentId, true)
        const linked = new Map((await linkedAlerts(trx, organizationId, source.id, alertIds)).map((row) => [row.alertId, row.fingerprint]))
        alertIds.forEach((alertId, index) => {
          if (!linked.has(alertId)) throw invalidField(`alertIds/${index}`, 'is not an alert of this incident')
        })
        const severity = request.body.severity
          ? (await requireSeverity(trx, organizationId, request.body.severity, 'severity')).key
          : source.severity
        const now = new Date()
        const incidentId = await insertIncident(trx, {
          organizationId,
          title: title.trim(),
          summary: null,
          severity,
          openedBy: 'person',
          declaredBy: author,
          startedAt: source.startedAt,
          detectedAt: now,
        })
        await assignRole(trx, organizationId, incidentId, 'commander', author, author)
        await moveLinks(trx, organizationId, source.id, incidentId, { splitFrom: source.id }, { alertIds, rule: 'split', linkedBy: author })
        await excludeFingerprints(trx, organizationId, source.id, [...linked.values()])
        await updateIncident(trx, organizationId, source.id, {})
        await addTimeline(trx, [
          timelineEntry(organizationId, source.id, author, 'split', { incidentId, alertIds }),
          timelineEntry(organizationId, incidentId, author, 'split_from', {
            incidentId: source.id,
            reference: `INC-${source.number}`,
            alertIds,
          }),
          timelineEntry(organizationId, incidentId, author, 'role_assigned', { role: 'commander', userId: author }),
        ])
        const onSource = incidentAudit(request, organizationId, source.id)
        await recordAudit(trx, onSource.context, { ...onSource.entry, action: 'incident.split', after: { into: incidentId, alertIds } })
        const onNew = incidentAudit(request, organizationId, incidentId)
        await recordAudit(trx, onNew.context, {
          ...onNew.entry,
          action: 'incident.declared',
          after: { title, severity, splitFrom: source.id, alertIds },
        })
        return fullIncidentBody(trx, organizationId, await incidentOrNotFound(trx, organizationId, incidentId))
      })
      return reply.code(201).send(created)
    },
  )
}
