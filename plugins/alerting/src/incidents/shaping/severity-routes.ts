import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { lockUntilCommit } from '@svc/db'
import { ConflictError, NullableString, invalidField } from '@svc/http'
import { SEVERITY_KEY_PATTERN } from '../model.js'
import {
  hasOwnSeverities,
  incidentsWithSeverities,
  PAGING_PRIORITIES,
  replaceSeverities,
  severitiesOf,
  type SeverityDefinition,
} from './severities.js'

const tags = ['incidents']
const OrgParams = Type.Object({ orgId: Type.String() })
const url = '/api/v1/organizations/:orgId/incident-severities'

const SeverityFields = {
  key: Type.String({ pattern: SEVERITY_KEY_PATTERN, description: 'What incidents, the API and Slack call it, e.g. SEV1 or critical' }),
  name: Type.String({ minLength: 1, maxLength: 60, pattern: '\\S', description: 'What people read, e.g. Critical' }),
  description: NullableString({ maxLength: 500, description: 'When to pick it' }),
  priority: Type.Enum(PAGING_PRIORITIES, {
    description:
      'The alert priority its incidents page at (responder requests), and the most urgent alert priority that opens an incident at it; status pages take its impact from it (P1 critical … P4 none)',
  }),
}

const IncidentSeverity = Type.Object(
  { ...SeverityFields, rank: Type.Integer({ minimum: 1, description: '1: the most severe' }) },
  { title: 'IncidentSeverity' },
)
const IncidentSeverities = Type.Object(
  {
    data: Type.Array(IncidentSeverity),
    custom: Type.Boolean({ description: 'false: the organization set none, these are the defaults' }),
  },
  { title: 'IncidentSeverities' },
)
const ReplaceSeverities = Type.Object(
  {
    severities: Type.Array(
      Type.Object({ ...SeverityFields, description: Type.Optional(SeverityFields.description) }, { additionalProperties: false }),
      { minItems: 2, maxItems: 10, description: 'The most severe first' },
    ),
  },
  { additionalProperties: false },
)

const answer = (severities: SeverityDefinition[], custom: boolean) => ({
  data: severities.map((severity, index) => ({ ...severity, rank: index + 1 })),
  custom,
})

/**
 * The organization's incident severities (decision 0031, "Severities"): names, descriptions, the
 * order and the paging priority of each, replaced as one list so the order is whole. Reading needs
 * alerting viewer, replacing alerting manager; audited.
 */
export const incidentSeverityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db

  app.get(
    url,
    {
      schema: {
        tags,
        summary: 'List the organization’s incident severities, the most severe first (alerting viewer)',
        params: OrgParams,
        response: { 200: IncidentSeverities },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      return answer(await severitiesOf(db, organizationId), await hasOwnSeverities(db, organizationId))
    },
  )

  app.put(
    url,
    {
      schema: {
        tags,
        summary: 'Replace the organization’s incident severities, the most severe first (alerting manager)',
        description:
          'Two to ten severities with distinct keys (in any letter case). A severity that incidents have cannot be left out: 409 names it and how many incidents have it (move them first). Workflows whose severity condition names one left out say so in their `problems`. The defaults are SEV1 Critical (P1), SEV2 Major (P2), SEV3 Minor (P3) and SEV4 Low (P4).',
        params: OrgParams,
        body: ReplaceSeverities,
        response: { 200: IncidentSeverities },
      },
      onRequest: app.requireProductRole('alerting', 'manager'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const severities = request.body.severities.map((severity) => ({ ...severity, description: severity.description ?? null }))
      const seen = new Set<string>()
      severities.forEach((severity, index) => {
        const folded = severity.key.toLowerCase()
        if (seen.has(folded)) throw invalidField(`severities/${index}/key`, `names ${severity.key} a second time`)
        seen.add(folded)
      })
      await db.transaction().execute(async (trx) => {
        // Two replacements at once: one after the other, each checking what the other left.
        await lockUntilCommit(trx, `incident-severities:${organizationId}`)
        const before = await severitiesOf(trx, organizationId)
        const dropped = before.filter((old) => !severities.some((severity) => severity.key === old.key)).map((old) => old.key)
        const inUse = await incidentsWithSeverities(trx, organizationId, dropped)
        const [key, count] = [...inUse.entries()][0] ?? []
        if (key)
          throw new ConflictError(
            `${key} is the severity of ${count} incident(s): keep it, or change their severity first (PATCH …/incidents/:id)`,
          )
        await replaceSeverities(trx, organizationId, severities, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'alerting',
          entityType: 'incident_severities',
          entityId: organizationId,
          action: 'incident_severities.replaced',
          before: { severities: before },
          after: { severities },
        })
      })
      return answer(severities, true)
    },
  )
}
