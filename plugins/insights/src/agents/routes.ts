import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { NotFoundError, Timestamp } from '@svc/http'
import { findAnalysis } from '../queries/analyses.js'
import { agentOutputsOf, agentSwitches, putAgentSwitches } from '../queries/agents.js'
import { InsightParams, OrgParams } from '../analyses/schemas.js'

const tags = ['insights']

const AgentSettings = Type.Object(
  {
    investigator: Type.Boolean({ description: 'Automatic investigations of new P1/P2 alerts (a person may still ask for one)' }),
    runbook: Type.Boolean({ description: 'Runbooks matched to each investigated incident' }),
    comms: Type.Boolean({ description: 'Status page update and stakeholder summary drafts' }),
    oncall: Type.Boolean({ description: 'The two-line brief in pages and whom to add' }),
  },
  { additionalProperties: false, title: 'AgentSettings' },
)

const AgentOutput = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    agent: Type.Enum(['runbook', 'comms', 'oncall'] as const),
    inputs: Type.Record(Type.String(), Type.Unknown(), { description: 'What the agent used: the investigation, runbooks, policies' }),
    output: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'runbook: {matches: [{runbookId, version, title, score, why, steps}]}; comms: {statusPageUpdate: {name, status, body}, stakeholderSummary, publish}; oncall: {lines, suggestions}',
    }),
    createdAt: Timestamp,
  },
  { title: 'AgentOutput' },
)

/**
 * The agents after an investigation (decision 0021): which ones the organization runs (insights
 * viewer reads, manager changes, audited), and what each made of an investigation.
 */
export const agentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('insights', 'viewer')
  const manager = app.requireProductRole('insights', 'manager')

  app.get(
    '/api/v1/organizations/:orgId/insights/agents',
    {
      schema: {
        tags,
        summary: 'Which agents the organization runs (insights viewer)',
        params: OrgParams,
        response: { 200: AgentSettings },
      },
      onRequest: viewer,
    },
    async (request) => agentSwitches(db, membershipOf(request).organizationId),
  )

  app.put(
    '/api/v1/organizations/:orgId/insights/agents',
    {
      schema: {
        tags,
        summary: 'Turn agents on or off (insights manager)',
        params: OrgParams,
        body: AgentSettings,
        response: { 200: AgentSettings },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await agentSwitches(trx, organizationId)
        await putAgentSwitches(trx, organizationId, request.body, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'insights',
          entityType: 'agent_settings',
          entityId: organizationId,
          action: 'agent_settings.updated',
          before,
          after: request.body,
        })
      })
      return request.body
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/insights/:insightId/agents',
    {
      schema: {
        // The derived id would be that of `GET …/insights/agents`.
        operationId: 'getOrganizationsInsightsByInsightIdAgents',
        tags,
        summary: 'What the runbook, comms and on-call agents made of an investigation (insights viewer)',
        params: InsightParams,
        response: { 200: Type.Object({ data: Type.Array(AgentOutput) }) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const analysis = isUuid(request.params.insightId) ? await findAnalysis(db, organizationId, request.params.insightId) : undefined
      if (!analysis) throw new NotFoundError('insight')
      const rows = await agentOutputsOf(db, organizationId, analysis.id)
      return {
        data: rows.map((row) => ({
          ...row,
          agent: row.agent as 'runbook' | 'comms' | 'oncall',
          inputs: row.inputs as Record<string, unknown>,
          output: row.output as Record<string, unknown>,
          createdAt: row.createdAt.toISOString(),
        })),
      }
    },
  )
}
