import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { deployBody, DeployEvent } from '../intake/index.js'
import type { LatestAnalysisReader } from './alert-command-room-routes.js'
import { deploysBeforeIncident, fullIncidentBody, incidentOrNotFound, linkBody, timelineBody } from './common.js'
import { alertIdsOf, listIncidentAlerts, listTimeline } from './queries.js'
import { Incident, IncidentAlert, IncidentParams, TimelineEntry } from './schemas.js'

/** What the room shows of each list; the list routes page through the rest. */
const ROOM_ENTRIES = 50
const ROOM_DEPLOYS = 20

const IncidentRoom = Type.Object(
  {
    incident: Incident,
    alerts: Type.Array(IncidentAlert, { description: `The first ${ROOM_ENTRIES} alerts, in the order they joined (…/alerts has all)` }),
    timeline: Type.Array(TimelineEntry, { description: `The newest ${ROOM_ENTRIES} entries (…/timeline has all)` }),
    deploys: Type.Array(DeployEvent, {
      description: 'Deploys of the incident’s services, and of the services they depend on, in the window before it started; newest first',
    }),
    windowMinutes: Type.Integer(),
    analysis: Type.Union(
      [
        Type.Object({ id: Type.String({ format: 'uuid' }), status: Type.String(), summary: Type.Union([Type.String(), Type.Null()]) }),
        Type.Null(),
      ],
      {
        description: 'The latest analysis of the incident’s first alert (GET …/insights/:insightId has all of it)',
      },
    ),
  },
  { title: 'IncidentCommandRoom' },
)

/**
 * The incident's command room (decision 0019): the incident with its roles, its alerts and why
 * each is there, its newest timeline entries, what was deployed before it to its services or to
 * what they depend on, and its first alert's analysis. An alert's own command room
 * (`…/alerts/:id/command-room`) stays as it was.
 */
export const incidentCommandRoomRoutes: FastifyPluginAsyncTypebox<{ latestAnalysis: LatestAnalysisReader }> = async (
  app,
  { latestAnalysis },
) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/incidents/:incidentId/command-room',
    {
      schema: {
        tags: ['incidents'],
        summary:
          'The incident’s command room: the incident, its alerts, timeline, the deploys before it and its analysis (alerting viewer)',
        params: IncidentParams,
        querystring: Type.Object({
          windowMinutes: Type.Integer({ minimum: 1, maximum: 10_080, default: 120, description: 'How far back to look for deploys' }),
        }),
        response: { 200: IncidentRoom },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { windowMinutes } = request.query
      const row = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      const first = { offset: 0, limit: ROOM_ENTRIES }
      const [incident, alerts, timeline, deploys] = await Promise.all([
        fullIncidentBody(db, organizationId, row),
        listIncidentAlerts(db, organizationId, row.id, first),
        listTimeline(db, organizationId, row.id, first),
        deploysBeforeIncident(db, organizationId, row, windowMinutes, ROOM_DEPLOYS),
      ])
      // The latest analysis of the incident or of any of its alerts (an analysis asked for either explains it).
      const analysis = await latestAnalysis(db, organizationId, {
        sourceProduct: 'alerting',
        incidentId: row.id,
        sameIncident: await alertIdsOf(db, organizationId, row.id),
      })
      return {
        incident,
        alerts: alerts.rows.map(linkBody),
        timeline: timeline.rows.map(timelineBody),
        deploys: deploys.map(deployBody),
        windowMinutes,
        analysis: analysis ? { id: analysis.id, status: analysis.status, summary: analysis.summary } : null,
      }
    },
  )
}
