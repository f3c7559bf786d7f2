import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError } from '@svc/http'
import {
  deletePolicy,
  findPolicy,
  insertPolicy,
  listPolicies,
  policyNameTaken,
  storedSteps,
  updatePolicy,
  type PolicyRow,
} from './queries.js'
import { CreatePolicy, Policy, PolicyParams, PolicyQuery, PolicySummary, UpdatePolicy } from './schemas.js'
import { checkTargets, policyProblems, type DestinationTargets } from './targets.js'

const tags = ['escalation']
const OrgParams = Type.Object({ orgId: Type.String() })

// The stored steps are the validated request body, less targets deleted since (targets.ts).
const stepsOf = (row: PolicyRow) => storedSteps(row.steps)

function policyFields(row: PolicyRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    repeat: row.repeatCount,
    ackTimeoutMinutes: row.ackTimeoutMinutes,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    problems: policyProblems(stepsOf(row)),
  }
}

const policyBody = (row: PolicyRow) => ({ ...policyFields(row), steps: stepsOf(row) })
const policyState = (row: PolicyRow) => ({
  name: row.name,
  description: row.description,
  repeat: row.repeatCount,
  ackTimeoutMinutes: row.ackTimeoutMinutes,
  steps: row.steps,
})

/**
 * Escalation policies: who is paged, in which order, and how long each step waits
 * for an acknowledgement. Reading needs alerting viewer, changing alerting manager; changes are
 * audited. Alerts escalate with them through webhook configs (escalationPolicyId, routingRules).
 */
/** Something that escalates with a policy, which then cannot be deleted: answers how to name it ("the webhook config X"). */
export type PolicyReference = (db: Executor, organizationId: string, policyId: string) => Promise<string | undefined>

export interface EscalationPolicyOptions {
  destinations: DestinationTargets
  /** What may escalate with a policy (intake's webhook configs), checked before it is deleted. */
  references: PolicyReference[]
}

export const escalationPolicyRoutes: FastifyPluginAsyncTypebox<EscalationPolicyOptions> = async (app, { destinations, references }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const policyOf = async (executor: Executor, organizationId: string, policyId: string, forUpdate = false) => {
    const row = isUuid(policyId) ? await findPolicy(executor, organizationId, policyId, forUpdate) : undefined
    if (!row) throw new NotFoundError('escalation policy')
    return row
  }
  const entry = (organizationId: string, policyId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'escalation_policy',
    entityId: policyId,
  })

  app.get(
    '/api/v1/organizations/:orgId/escalation-policies',
    {
      schema: {
        tags,
        summary: 'List escalation policies (alerting viewer)',
        params: OrgParams,
        querystring: PolicyQuery,
        response: { 200: ListResponse(PolicySummary) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, q } = request.query
      const { rows, total } = await listPolicies(db, membershipOf(request).organizationId, q, pageOf({ page, limit }))
      return { data: rows.map((row) => ({ ...policyFields(row), stepCount: stepsOf(row).length })), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/escalation-policies/:policyId',
    {
      schema: { tags, summary: 'An escalation policy with its steps (alerting viewer)', params: PolicyParams, response: { 200: Policy } },
      onRequest: viewer,
    },
    async (request) => policyBody(await policyOf(db, membershipOf(request).organizationId, request.params.policyId)),
  )

  app.post(
    '/api/v1/organizations/:orgId/escalation-policies',
    {
      schema: {
        tags,
        summary: 'Create an escalation policy (alerting manager)',
        description:
          'Steps page their targets in order; each waits its delay for an acknowledgement before the next. Targets must be users (active members), schedules, teams, chat integrations or outbound webhooks of the organization.',
        params: OrgParams,
        body: CreatePolicy,
        response: { 201: Policy },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { steps, repeat = 0, description = null, ackTimeoutMinutes = null } = request.body
      const name = request.body.name.trim()
      const created = await db.transaction().execute(async (trx) => {
        await checkTargets(trx, organizationId, steps, destinations)
        if (await policyNameTaken(trx, organizationId, name)) throw new ConflictError(`an escalation policy named ${name} exists`)
        const policy = await insertPolicy(trx, {
          organizationId,
          name,
          description,
          repeatCount: repeat,
          ackTimeoutMinutes,
          steps: steps,
          createdBy: request.user.userId,
        })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, policy.id),
          action: 'escalation_policy.created',
          after: policyState(policy),
        })
        return policy
      })
      return reply.code(201).send(policyBody(created))
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/escalation-policies/:policyId',
    {
      schema: {
        tags,
        summary: 'Change an escalation policy; steps are replaced whole (alerting manager)',
        description: 'Alerts escalating with it take the change at their next step.',
        params: PolicyParams,
        body: UpdatePolicy,
        response: { 200: Policy },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { steps, repeat, name, description, ackTimeoutMinutes } = request.body
      const change = {
        ...(name ? { name: name.trim() } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(repeat !== undefined ? { repeatCount: repeat } : {}),
        ...(ackTimeoutMinutes !== undefined ? { ackTimeoutMinutes } : {}),
        ...(steps ? { steps: steps } : {}),
      }
      return policyBody(
        await db.transaction().execute(async (trx) => {
          const before = await policyOf(trx, organizationId, request.params.policyId, true)
          if (steps) await checkTargets(trx, organizationId, steps, destinations)
          if (change.name && (await policyNameTaken(trx, organizationId, change.name, before.id))) {
            throw new ConflictError(`an escalation policy named ${change.name} exists`)
          }
          const after = await updatePolicy(trx, organizationId, before.id, change)
          if (!after) throw new NotFoundError('escalation policy')
          await recordAudit(trx, auditContextOf(request), {
            ...entry(organizationId, before.id),
            action: 'escalation_policy.updated',
            before: policyState(before),
            after: policyState(after),
          })
          return after
        }),
      )
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/escalation-policies/:policyId',
    {
      schema: {
        tags,
        summary: 'Delete an escalation policy (alerting manager)',
        description:
          'A policy a webhook config names (as its policy or in a routing rule) is not deleted (409). Alerts escalating with it stop at their next step.',
        params: PolicyParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await policyOf(trx, organizationId, request.params.policyId, true)
        for (const reference of references) {
          const user = await reference(trx, organizationId, before.id)
          if (user) throw new ConflictError(`${user} escalates with this policy: change it first`)
        }
        if (!(await deletePolicy(trx, organizationId, before.id))) throw new NotFoundError('escalation policy')
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'escalation_policy.deleted',
          before: policyState(before),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
