import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { isUuid, membershipOf } from '@svc/auth'
import { NotFoundError } from '@svc/http'
import { deployBody, DeployEvent, deploysIn, minutesBefore } from '../intake/index.js'
import type { Executor } from '@svc/db'
import type { IncidentReference } from '@svc/events'
import {
  Alert,
  alertBody,
  AlertEvent,
  AlertIncident,
  AlertParams,
  eventBody,
  findAlert,
  listAlertEvents,
  URGENT_PRIORITIES,
} from '../alerts/index.js'
import { catalogEntryOf } from '../oncall/index.js'
import { incidentOfAlert } from './queries.js'

/** The first entries of the timeline a command room shows; repeats are one entry, so this is most of them. */
const COMMAND_ROOM_TIMELINE = 100

const NullableString = Type.Union([Type.String(), Type.Null()])
const RoomAnalysis = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.String({ description: 'pending, processing, completed or failed' }),
    summary: NullableString,
    rootCause: NullableString,
    recommendations: NullableString,
    severity: NullableString,
    suspectedDeployId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'CommandRoomAnalysis', description: 'The latest analysis of the alert (GET …/insights/:insightId has all of it)' },
)

const RoomIncident = Type.Object(
  {
    ...AlertIncident.properties,
    commandRoom: Type.String({ description: 'The path of the incident’s own command room, where the response is run' }),
  },
  { title: 'CommandRoomIncident' },
)

const RoomService = Type.Object(
  {
    key: Type.String(),
    ownerTeam: NullableString,
    tier: Type.Union([Type.Integer(), Type.Null()]),
    runbook: NullableString,
  },
  { title: 'CommandRoomService', description: 'The catalog’s entry for the alert’s service (`…/services`)' },
)

const CommandRoom = Type.Object(
  {
    alert: Alert,
    service: Type.Union([RoomService, Type.Null()], {
      description: 'Who owns the alert’s service and its runbook, when the catalog knows the name it carries',
    }),
    incident: Type.Union([RoomIncident, Type.Null()], {
      description: 'The incident the alert is in (INC-n), and why; null until correlation has placed it',
    }),
    timeline: Type.Array(AlertEvent),
    deploys: Type.Array(DeployEvent, {
      description: 'Deploys of the alert’s service in the window before it was first seen, newest first',
    }),
    windowMinutes: Type.Integer(),
    analysis: Type.Union([RoomAnalysis, Type.Null()], { description: 'Null until one is requested' }),
  },
  { title: 'CommandRoom' },
)

/** The latest analysis of an incident, as the insights surface reads it (the product service wires it in). */
export type LatestAnalysisReader = (
  db: Executor,
  organizationId: string,
  incident: IncidentReference & {
    /** The other subjects of the same incident (an incident's alerts, an alert's incident): the latest analysis of any is answered. */
    sameIncident?: string[]
  },
) => Promise<
  | (Omit<Static<typeof RoomAnalysis>, 'createdAt' | 'completedAt'> & {
      createdAt: Date
      completedAt: Date | null
      /** The on-call agent's two lines (what is failing; the suspect change and the runbook), once it has run. */
      oncall?: string[] | null
    })
  | undefined
>

export type LatestAnalysis = NonNullable<Awaited<ReturnType<LatestAnalysisReader>>>

/** `LatestAnalysisReader` for several incidents of one product at once, by incident id. */
export type LatestAnalysesReader = (
  db: Executor,
  organizationId: string,
  sourceProduct: IncidentReference['sourceProduct'],
  incidentIds: string[],
) => Promise<ReadonlyMap<string, LatestAnalysis>>

/**
 * A P1 or P2 alert opens a command room: the alert, the incident it is in (the incident's own room
 * is where the response is run), its timeline, what was deployed to its service just before it
 * fired, and its analysis. Lower priorities have none (404) unless a
 * workflow opened one (workflows/runner.ts).
 */
export const commandRoomRoutes: FastifyPluginAsyncTypebox<{ latestAnalysis: LatestAnalysisReader }> = async (app, { latestAnalysis }) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/alerts/:alertId/command-room',
    {
      schema: {
        tags: ['alerts'],
        summary: 'The command room of a P1/P2 alert, or of one a workflow opened it for (alerting viewer)',
        params: AlertParams,
        querystring: Type.Object({
          windowMinutes: Type.Integer({ minimum: 1, maximum: 10_080, default: 120, description: 'How far back to look for deploys' }),
        }),
        response: { 200: CommandRoom },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const alert = isUuid(request.params.alertId) ? await findAlert(db, organizationId, request.params.alertId) : undefined
      if (!alert || !(URGENT_PRIORITIES.has(alert.priority) || alert.commandRoomOpenedAt))
        throw new NotFoundError('command room (P1 and P2 alerts have one, and alerts a workflow opened one for)')
      const { windowMinutes } = request.query
      const [incident, service, timeline, deploys] = await Promise.all([
        incidentOfAlert(db, organizationId, alert.id),
        alert.service ? catalogEntryOf(db, organizationId, alert.service) : Promise.resolve(undefined),
        listAlertEvents(db, organizationId, alert.id, { offset: 0, limit: COMMAND_ROOM_TIMELINE }),
        alert.service
          ? deploysIn(db, organizationId, { services: [alert.service], ...minutesBefore(alert.firstSeenAt, windowMinutes) })
          : Promise.resolve([]),
      ])
      // An analysis of its incident explains the alert too: the latest of either is shown.
      const analysis = await latestAnalysis(db, organizationId, {
        sourceProduct: 'alerting',
        incidentId: alert.id,
        sameIncident: incident ? [incident.id] : [],
      })
      return {
        alert: alertBody(alert),
        service: service ?? null,
        incident: incident
          ? {
              ...incident,
              reference: `INC-${incident.number}`,
              matched: incident.matched as Record<string, unknown>,
              linkedAt: incident.linkedAt.toISOString(),
              commandRoom: `/api/v1/organizations/${organizationId}/incidents/${incident.id}/command-room`,
            }
          : null,
        timeline: timeline.rows.map(eventBody),
        deploys: deploys.map(deployBody),
        windowMinutes,
        analysis: analysis
          ? { ...analysis, createdAt: analysis.createdAt.toISOString(), completedAt: analysis.completedAt?.toISOString() ?? null }
          : null,
      }
    },
  )
}
