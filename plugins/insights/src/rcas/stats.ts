import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { OrgParams } from '../analyses/schemas.js'
import { rcaStatistics } from '../queries/rcas.js'
import { tags } from './routes.js'
import { rcaStatuses } from './schemas.js'

const ItemCounts = {
  open: Type.Integer({ description: 'Open or in progress' }),
  overdue: Type.Integer({ description: 'Open, past their due date' }),
  done: Type.Integer(),
  total: Type.Integer(),
}
const RcaStats = Type.Object(
  {
    byStatus: Type.Record(Type.Enum(rcaStatuses), Type.Integer()),
    total: Type.Integer(),
    medianSecondsToPublish: Type.Union([Type.Integer(), Type.Null()], {
      description: 'From the first linked incident’s start to publication, over published RCAs with incidents',
    }),
    publishedWithIncidents: Type.Integer(),
    actionItems: Type.Object(ItemCounts),
    actionItemsByAssignee: Type.Array(
      Type.Object({
        assigneeUserId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Null: unassigned' }),
        email: Type.Union([Type.String(), Type.Null()]),
        ...ItemCounts,
      }),
    ),
  },
  { title: 'RcaStats' },
)

/** `GET …/rcas/stats` (organization member). */
export const rcaStatsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/rcas/stats',
    {
      schema: {
        tags,
        summary: 'RCA statistics: counts by status, median time to publish, action items (organization member)',
        params: OrgParams,
        response: { 200: RcaStats },
      },
      onRequest: app.requireOrgMember,
    },
    async (request) => {
      const stats = await rcaStatistics(db, membershipOf(request).organizationId)
      const byStatus = Object.fromEntries(
        rcaStatuses.map((status) => [status, stats.byStatus.find((row) => row.status === status)?.count ?? 0]),
      ) as Record<(typeof rcaStatuses)[number], number>
      return {
        byStatus,
        total: Object.values(byStatus).reduce((sum, count) => sum + count, 0),
        medianSecondsToPublish: stats.medianSecondsToPublish,
        publishedWithIncidents: stats.publishedWithIncidents,
        actionItems: stats.actionItems,
        actionItemsByAssignee: stats.byAssignee,
      }
    },
  )
}
