import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, invalidField } from '@svc/http'
import { removeTargetEverywhere } from '../policies/targets.js'
import { activeMembersAmong } from '../people.js'
import {
  deleteTeam,
  findTeam,
  findTeamMember,
  insertTeam,
  listTeams,
  putTeamMember,
  removeTeamMember,
  teamMembers,
  teamNameTaken,
  updateTeam,
  type TeamMemberRow,
  type TeamRow,
} from './queries.js'
import {
  CreateTeam,
  PutTeamMember,
  Team,
  TeamMember,
  TeamMemberParams,
  TeamParams,
  TeamQuery,
  TeamSummary,
  UpdateTeam,
  type NewMember,
  type TeamRole,
} from './schemas.js'

const tags = ['teams']
const OrgParams = Type.Object({ orgId: Type.String() })

function memberBody(row: TeamMemberRow) {
  // The table's check constraint holds the role to the schema's list.
  return { userId: row.userId, email: row.email, role: row.role as TeamRole, addedAt: row.createdAt.toISOString() }
}

function teamFields(row: TeamRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** New members must be active members of the organization, each listed once: 400 naming the entry otherwise. */
async function checkNewMembers(db: Executor, organizationId: string, members: NewMember[], field: (index: number) => string) {
  const seen = new Set<string>()
  members.forEach((member, index) => {
    if (seen.has(member.userId)) throw invalidField(field(index), 'is listed twice')
    seen.add(member.userId)
  })
  const active = await activeMembersAmong(db, organizationId, [...seen])
  members.forEach((member, index) => {
    if (!active.has(member.userId)) throw invalidField(field(index), 'is not an active member of the organization')
  })
}

/**
 * On-call teams: people of the organization with a team role, the targets that
 * schedules and escalation policies name. Reading needs alerting viewer, changing alerting
 * manager; every change writes its audit entry in the same transaction.
 */
export const teamRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const teamOf = async (executor: Executor, organizationId: string, teamId: string, forUpdate = false) => {
    const row = isUuid(teamId) ? await findTeam(executor, organizationId, teamId, forUpdate) : undefined
    if (!row) throw new NotFoundError('team')
    return row
  }
  const audit = (request: Parameters<typeof auditContextOf>[0], organizationId: string, teamId: string) => ({
    context: auditContextOf(request),
    entry: { organizationId, product: 'alerting' as const, entityType: 'team', entityId: teamId },
  })

  app.get(
    '/api/v1/organizations/:orgId/teams',
    {
      schema: {
        tags,
        summary: 'List teams (alerting viewer)',
        params: OrgParams,
        querystring: TeamQuery,
        response: { 200: ListResponse(TeamSummary) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, q } = request.query
      const { rows, total } = await listTeams(db, membershipOf(request).organizationId, q, pageOf({ page, limit }))
      return { data: rows.map((row) => ({ ...teamFields(row), memberCount: row.memberCount ?? 0 })), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/teams/:teamId',
    {
      schema: { tags, summary: 'A team with its members (alerting viewer)', params: TeamParams, response: { 200: Team } },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const team = await teamOf(db, organizationId, request.params.teamId)
      return { ...teamFields(team), members: (await teamMembers(db, organizationId, team.id)).map(memberBody) }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/teams',
    {
      schema: {
        tags,
        summary: 'Create a team (alerting manager)',
        description: 'Names are unique in the organization, whatever the letter case (409). Members must be active members of it.',
        params: OrgParams,
        body: CreateTeam,
        response: { 201: Team },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { description = null, members = [] } = request.body
      const name = request.body.name.trim()
      const created = await db.transaction().execute(async (trx) => {
        await checkNewMembers(trx, organizationId, members, (index) => `members/${index}/userId`)
        if (await teamNameTaken(trx, organizationId, name)) throw new ConflictError(`a team named ${name} exists`)
        const team = await insertTeam(trx, { organizationId, name, description, createdBy: request.user.userId })
        for (const member of members) await putTeamMember(trx, organizationId, team.id, member.userId, member.role)
        const { context, entry } = audit(request, organizationId, team.id)
        await recordAudit(trx, context, { ...entry, action: 'team.created', after: { name: team.name, description, members } })
        return { team, members: await teamMembers(trx, organizationId, team.id) }
      })
      return reply.code(201).send({ ...teamFields(created.team), members: created.members.map(memberBody) })
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/teams/:teamId',
    {
      schema: {
        tags,
        summary: 'Rename or describe a team (alerting manager)',
        params: TeamParams,
        body: UpdateTeam,
        response: { 200: Team },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const change = { ...request.body, ...(request.body.name ? { name: request.body.name.trim() } : {}) }
      const updated = await db.transaction().execute(async (trx) => {
        const before = await teamOf(trx, organizationId, request.params.teamId, true)
        if (change.name && (await teamNameTaken(trx, organizationId, change.name, before.id))) {
          throw new ConflictError(`a team named ${change.name} exists`)
        }
        const after = await updateTeam(trx, organizationId, before.id, change)
        if (!after) throw new NotFoundError('team')
        const { context, entry } = audit(request, organizationId, before.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'team.updated',
          before: { name: before.name, description: before.description },
          after: { name: after.name, description: after.description },
        })
        return after
      })
      return { ...teamFields(updated), members: (await teamMembers(db, organizationId, updated.id)).map(memberBody) }
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/teams/:teamId',
    {
      schema: {
        tags,
        summary: 'Delete a team; escalation policies naming it lose that target, audited (alerting manager)',
        params: TeamParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await teamOf(trx, organizationId, request.params.teamId, true)
        const members = await teamMembers(trx, organizationId, before.id)
        await removeTargetEverywhere(trx, auditContextOf(request), organizationId, { type: 'team', id: before.id })
        if (!(await deleteTeam(trx, organizationId, before.id))) throw new NotFoundError('team')
        const { context, entry } = audit(request, organizationId, before.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'team.deleted',
          before: { name: before.name, description: before.description, members: members.map(({ userId, role }) => ({ userId, role })) },
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.put(
    '/api/v1/organizations/:orgId/teams/:teamId/members/:userId',
    {
      schema: {
        tags,
        summary: 'Add a member to a team, or change their team role (alerting manager)',
        params: TeamMemberParams,
        body: PutTeamMember,
        response: { 200: TeamMember, 201: TeamMember },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { userId } = request.params
      const { role } = request.body
      const result = await db.transaction().execute(async (trx) => {
        const team = await teamOf(trx, organizationId, request.params.teamId, true)
        if (!isUuid(userId) || !(await activeMembersAmong(trx, organizationId, [userId])).has(userId)) {
          throw invalidField('userId', 'is not an active member of the organization', 'params')
        }
        const before = await putTeamMember(trx, organizationId, team.id, userId, role)
        const { context, entry } = audit(request, organizationId, team.id)
        await recordAudit(trx, context, {
          ...entry,
          action: before === undefined ? 'team.member_added' : 'team.member_role_changed',
          before: before === undefined ? null : { userId, role: before },
          after: { userId, role },
        })
        const member = await findTeamMember(trx, organizationId, team.id, userId)
        if (!member) throw new NotFoundError('team member')
        return { member, added: before === undefined }
      })
      return reply.code(result.added ? 201 : 200).send(memberBody(result.member))
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/teams/:teamId/members/:userId',
    {
      schema: { tags, summary: 'Remove a member from a team (alerting manager)', params: TeamMemberParams, response: { 204: Type.Null() } },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const team = await teamOf(trx, organizationId, request.params.teamId, true)
        const removed = isUuid(request.params.userId)
          ? await removeTeamMember(trx, organizationId, team.id, request.params.userId)
          : undefined
        if (!removed) throw new NotFoundError('team member')
        const { context, entry } = audit(request, organizationId, team.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'team.member_removed',
          before: { userId: request.params.userId, role: removed.role },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
