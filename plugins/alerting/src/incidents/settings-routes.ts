import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { Timestamp } from '@svc/http'
import { incidentSettingsOf, putIncidentSettings } from './queries.js'

const OrgParams = Type.Object({ orgId: Type.String() })
const resolveWithAlerts = Type.Boolean({
  description:
    'An incident that alerts opened resolves when the last of them resolves (default true); its status pages follow. Off: a person resolves it',
})
const IncidentSettings = Type.Object(
  {
    resolveWithAlerts,
    defaults: Type.Boolean({ description: 'Nobody has changed them' }),
    updatedBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    updatedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'IncidentSettings' },
)
const PutIncidentSettings = Type.Object({ resolveWithAlerts }, { additionalProperties: false })

const settingsBody = (settings: Awaited<ReturnType<typeof incidentSettingsOf>>) => ({
  ...settings,
  updatedAt: settings.updatedAt?.toISOString() ?? null,
})

/**
 * An organization's incident settings (decision 0019, "State flows both ways"): read by alerting
 * viewers, replaced by alerting managers, every change audited.
 */
export const incidentSettingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db

  app.get(
    '/api/v1/organizations/:orgId/incident-settings',
    {
      schema: {
        tags: ['incidents'],
        summary: 'How incidents follow their alerts (alerting viewer)',
        params: OrgParams,
        response: { 200: IncidentSettings },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => settingsBody(await incidentSettingsOf(db, membershipOf(request).organizationId)),
  )

  app.put(
    '/api/v1/organizations/:orgId/incident-settings',
    {
      schema: {
        tags: ['incidents'],
        summary: 'Replace the incident settings (alerting manager)',
        params: OrgParams,
        body: PutIncidentSettings,
        response: { 200: IncidentSettings },
      },
      onRequest: app.requireProductRole('alerting', 'manager'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      return db.transaction().execute(async (trx) => {
        const before = await incidentSettingsOf(trx, organizationId)
        await putIncidentSettings(trx, organizationId, request.body, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'alerting',
          entityType: 'incident_settings',
          entityId: organizationId,
          action: 'incident_settings.updated',
          before: { resolveWithAlerts: before.resolveWithAlerts },
          after: request.body,
        })
        return settingsBody(await incidentSettingsOf(trx, organizationId))
      })
    },
  )
}
