import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError } from '@svc/http'
import {
  deleteWorkflow,
  findWorkflow,
  insertWorkflow,
  listRuns,
  listWorkflows,
  storedActionOutcomes,
  storedActions,
  storedConditionOutcomes,
  storedConditions,
  updateWorkflow,
  workflowNameTaken,
  type RunRow,
  type WorkflowRow,
} from './queries.js'
import {
  CreateWorkflow,
  DryRunBody,
  DryRunResult,
  RunQuery,
  UpdateWorkflow,
  Workflow,
  WorkflowParams,
  WorkflowQuery,
  WorkflowRun,
  type Trigger,
} from './schemas.js'
import { dryRun } from './dry-run.js'
import { checkWorkflow, problemsOf, referencesOf } from './validate.js'

const tags = ['workflows']
const OrgParams = Type.Object({ orgId: Type.String() })

// Written only from validated request bodies.
const definitionOf = (row: WorkflowRow) => ({
  trigger: row.trigger as Trigger,
  conditions: storedConditions(row.conditions),
  actions: storedActions(row.actions),
})

/** Workflows as answered, each with what its actions could not do as things stand. */
async function workflowBodies(db: Executor, organizationId: string, rows: WorkflowRow[]) {
  const references = await referencesOf(
    db,
    organizationId,
    rows.map((row) => definitionOf(row).actions),
  )
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    ...definitionOf(row),
    enabled: row.enabled,
    oncePerIncident: row.oncePerIncident,
    delayMinutes: row.delayMinutes,
    problems: problemsOf(definitionOf(row).actions, references, definitionOf(row).conditions),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }))
}

const workflowBody = async (db: Executor, organizationId: string, row: WorkflowRow) => (await workflowBodies(db, organizationId, [row]))[0]!

const runBody = (row: RunRow) => ({
  id: row.id,
  workflowId: row.workflowId,
  trigger: row.trigger as Trigger,
  alertId: row.alertId,
  deployEventId: row.deployEventId,
  incidentId: row.incidentId,
  status: row.status as 'queued' | 'running' | 'succeeded' | 'failed' | 'not_matched',
  conditions: storedConditionOutcomes(row.conditions ?? []),
  actions: storedActionOutcomes(row.actions),
  occurredAt: row.occurredAt.toISOString(),
  createdAt: row.createdAt.toISOString(),
  startsAt: row.startsAt?.toISOString() ?? null,
  finishedAt: row.finishedAt?.toISOString() ?? null,
})

const audited = (row: WorkflowRow) => ({
  name: row.name,
  enabled: row.enabled,
  oncePerIncident: row.oncePerIncident,
  delayMinutes: row.delayMinutes,
  ...definitionOf(row),
})

/**
 * Workflow automation: on an alert's, a deploy's or an incident's event (schemas.ts, `triggers`),
 * when every condition holds, ordered actions; every run is recorded with
 * the outcome of each condition and action (workflows/runner.ts runs them). Reading needs
 * alerting viewer, changing alerting manager; changes are audited.
 */
export const workflowRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const workflowOf = async (executor: Executor, organizationId: string, workflowId: string, forUpdate = false) => {
    const row = isUuid(workflowId) ? await findWorkflow(executor, organizationId, workflowId, forUpdate) : undefined
    if (!row) throw new NotFoundError('workflow')
    return row
  }
  const entry = (organizationId: string, workflowId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'workflow',
    entityId: workflowId,
  })
  const nameFree = async (executor: Executor, organizationId: string, name: string, exceptId?: string) => {
    if (await workflowNameTaken(executor, organizationId, name, exceptId)) throw new ConflictError(`a workflow named "${name}" exists`)
  }

  app.get(
    '/api/v1/organizations/:orgId/workflows',
    {
      schema: {
        tags,
        summary: 'List workflows by name (alerting viewer)',
        params: OrgParams,
        querystring: WorkflowQuery,
        response: { 200: ListResponse(Workflow) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, trigger } = request.query
      const { organizationId } = membershipOf(request)
      const { rows, total } = await listWorkflows(db, organizationId, trigger, pageOf({ page, limit }))
      return { data: await workflowBodies(db, organizationId, rows), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/workflows/:workflowId',
    { schema: { tags, summary: 'A workflow (alerting viewer)', params: WorkflowParams, response: { 200: Workflow } }, onRequest: viewer },
    async (request) => {
      const { organizationId } = membershipOf(request)
      return workflowBody(db, organizationId, await workflowOf(db, organizationId, request.params.workflowId))
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/workflows',
    {
      schema: {
        tags,
        summary: 'Create a workflow (alerting manager)',
        description:
          'Each condition and action applies to the subjects of some triggers only (alerts, deploy.recorded, incidents; their descriptions say which): one on another trigger is refused. Every chat integration, outbound webhook, escalation policy, member, team, schedule, tracker and custom field named must be the organization’s. 400 names the field.',
        params: OrgParams,
        body: CreateWorkflow,
        response: { 201: Workflow },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { body } = request
      const values = {
        name: body.name.trim(),
        description: body.description ?? null,
        trigger: body.trigger,
        conditions: body.conditions ?? [],
        actions: body.actions,
        enabled: body.enabled ?? true,
        oncePerIncident: body.oncePerIncident ?? false,
        delayMinutes: body.delayMinutes ?? 0,
      }
      await checkWorkflow(db, organizationId, values)
      const created = await db.transaction().execute(async (trx) => {
        await nameFree(trx, organizationId, values.name)
        const workflow = await insertWorkflow(trx, { ...values, organizationId, createdBy: request.user.userId })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, workflow.id),
          action: 'workflow.created',
          after: audited(workflow),
        })
        return workflow
      })
      return reply.code(201).send(await workflowBody(db, organizationId, created))
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/workflows/:workflowId',
    {
      schema: {
        tags,
        summary: 'Change a workflow (alerting manager)',
        description: 'The workflow as changed is checked as a whole, as on creation. Runs already queued follow the workflow as it was.',
        params: WorkflowParams,
        body: UpdateWorkflow,
        response: { 200: Workflow },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { body } = request
      const updated = await db.transaction().execute(async (trx) => {
        const before = await workflowOf(trx, organizationId, request.params.workflowId, true)
        const name = body.name?.trim()
        if (name) await nameFree(trx, organizationId, name, before.id)
        const current = definitionOf(before)
        await checkWorkflow(trx, organizationId, {
          trigger: body.trigger ?? current.trigger,
          conditions: body.conditions ?? current.conditions,
          actions: body.actions ?? current.actions,
        })
        const after = await updateWorkflow(trx, organizationId, before.id, {
          ...(name ? { name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.trigger ? { trigger: body.trigger } : {}),
          ...(body.conditions ? { conditions: body.conditions } : {}),
          ...(body.actions ? { actions: body.actions } : {}),
          ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          ...(body.oncePerIncident !== undefined ? { oncePerIncident: body.oncePerIncident } : {}),
          ...(body.delayMinutes !== undefined ? { delayMinutes: body.delayMinutes } : {}),
        })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'workflow.updated',
          before: audited(before),
          after: audited(after),
        })
        return after
      })
      return workflowBody(db, organizationId, updated)
    },
  )

  for (const enabled of [true, false]) {
    app.post(
      `/api/v1/organizations/:orgId/workflows/:workflowId/${enabled ? 'enable' : 'disable'}`,
      {
        schema: {
          tags,
          summary: enabled
            ? 'Enable a workflow: events from now on run it (alerting manager)'
            : 'Disable a workflow: events from now on do not run it; queued runs still run, except those waiting out a delay (alerting manager)',
          params: WorkflowParams,
          response: { 200: Workflow },
        },
        onRequest: manager,
      },
      async (request) => {
        const { organizationId } = membershipOf(request)
        const updated = await db.transaction().execute(async (trx) => {
          const before = await workflowOf(trx, organizationId, request.params.workflowId, true)
          if (before.enabled === enabled) return before
          const after = await updateWorkflow(trx, organizationId, before.id, { enabled })
          await recordAudit(trx, auditContextOf(request), {
            ...entry(organizationId, before.id),
            action: enabled ? 'workflow.enabled' : 'workflow.disabled',
            before: { enabled: before.enabled },
            after: { enabled },
          })
          return after
        })
        return workflowBody(db, organizationId, updated)
      },
    )
  }

  app.delete(
    '/api/v1/organizations/:orgId/workflows/:workflowId',
    {
      schema: {
        tags,
        summary: 'Delete a workflow and its runs (alerting manager)',
        params: WorkflowParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await workflowOf(trx, organizationId, request.params.workflowId, true)
        await deleteWorkflow(trx, organizationId, before.id)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'workflow.deleted',
          before: audited(before),
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/workflows/:workflowId/dry-run',
    {
      schema: {
        tags,
        summary: 'What the workflow would do for an alert, deploy or incident as it is now, doing none of it (alerting viewer)',
        description:
          'Name the subject its trigger acts on (`alertId`, `deployEventId` or `incidentId`). The conditions are evaluated as a run would evaluate them now (an incident change’s own value is the incident’s current one); each action says what it would act on, or why it would fail. Nothing is written.',
        params: WorkflowParams,
        body: DryRunBody,
        response: { 200: DryRunResult },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const workflow = await workflowOf(db, organizationId, request.params.workflowId)
      return dryRun(
        db,
        organizationId,
        { id: workflow.id, oncePerIncident: workflow.oncePerIncident, ...definitionOf(workflow) },
        request.body,
      )
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/workflows/:workflowId/runs',
    {
      schema: {
        tags,
        summary: 'A workflow’s runs, latest first: each condition’s outcome and each action’s (alerting viewer)',
        params: WorkflowParams,
        querystring: RunQuery,
        response: { 200: ListResponse(WorkflowRun) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, status } = request.query
      const { organizationId } = membershipOf(request)
      const workflow = await workflowOf(db, organizationId, request.params.workflowId)
      const { rows, total } = await listRuns(db, organizationId, workflow.id, status, pageOf({ page, limit }))
      return { data: rows.map(runBody), meta: { page, limit, total } }
    },
  )
}
