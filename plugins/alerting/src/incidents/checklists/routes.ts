import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { NotFoundError, Timestamp } from '@svc/http'
import { ROLE_PATTERN } from '../model.js'
import { incidentOrNotFound } from '../common.js'
import { checklistsOfIncident } from './of-type.js'
import { checklistOf, setTaskDone } from './operations.js'
import { deleteChecklist, listChecklists, putChecklist, type ChecklistRow } from './queries.js'

const tags = ['incidents']
const Role = Type.String({ pattern: ROLE_PATTERN, description: 'commander, communications, scribe, or a role of the organization’s own' })
const OrgParams = Type.Object({ orgId: Type.String() })
const RoleParams = Type.Object({ orgId: Type.String(), role: Role })
const TaskParams = Type.Object({
  orgId: Type.String(),
  incidentId: Type.String(),
  role: Role,
  position: Type.Integer({ minimum: 1, maximum: 30, description: 'The task’s place in the checklist, from 1' }),
})

const Checklist = Type.Object(
  { role: Type.String(), tasks: Type.Array(Type.String()), updatedBy: Type.Union([Type.String(), Type.Null()]), updatedAt: Timestamp },
  { title: 'IncidentRoleChecklist' },
)
const PutChecklist = Type.Object(
  {
    tasks: Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), {
      minItems: 1,
      maxItems: 30,
      uniqueItems: true,
      description: 'In the order they are worked; each once',
    }),
  },
  { additionalProperties: false },
)
const Person = Type.Union([
  Type.Object({ userId: Type.Union([Type.String(), Type.Null()]), email: Type.Union([Type.String(), Type.Null()]) }),
  Type.Null(),
])
const IncidentChecklist = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        role: Type.String(),
        holder: Person,
        tasks: Type.Array(
          Type.Object({
            position: Type.Integer(),
            task: Type.String(),
            done: Type.Boolean(),
            doneBy: Person,
            doneAt: Type.Union([Timestamp, Type.Null()]),
          }),
        ),
      }),
    ),
  },
  { title: 'IncidentChecklist' },
)

const checklistBody = (row: ChecklistRow) => ({ ...row, updatedAt: row.updatedAt.toISOString() })

/**
 * Checklists per incident role (decision 0031, "Roles with checklists"): the organization sets
 * the tasks of a role (alerting manager); on each incident the responders tick them (alerting
 * responder), through the API or Slack's `/incident done`; the timeline says who did what.
 */
export const checklistRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const responder = app.requireProductRole('alerting', 'responder')
  const manager = app.requireProductRole('alerting', 'manager')
  const entry = (organizationId: string, role: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'incident_checklist',
    entityId: role,
  })

  app.get(
    '/api/v1/organizations/:orgId/incident-checklists',
    {
      schema: {
        tags,
        summary: 'The checklists of incident roles (alerting viewer)',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(Checklist) }) },
      },
      onRequest: viewer,
    },
    async (request) => ({ data: (await listChecklists(db, membershipOf(request).organizationId)).map(checklistBody) }),
  )

  app.put(
    '/api/v1/organizations/:orgId/incident-checklists/:role',
    {
      schema: {
        tags,
        summary: 'Set the tasks of an incident role (alerting manager)',
        description: 'Replaces the list. Ticks on incidents stay with their task’s words: a task reworded is a new task.',
        params: RoleParams,
        body: PutChecklist,
        response: { 200: Checklist },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { role } = request.params
      const tasks = request.body.tasks.map((task) => task.trim())
      const row = await db.transaction().execute(async (trx) => {
        const saved = await putChecklist(trx, organizationId, role, tasks, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, role),
          action: 'incident_checklist.set',
          after: { role, tasks },
        })
        return saved
      })
      return checklistBody(row)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/incident-checklists/:role',
    {
      schema: {
        tags,
        summary: 'Remove the checklist of an incident role (alerting manager)',
        params: RoleParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { role } = request.params
      await db.transaction().execute(async (trx) => {
        if (!(await deleteChecklist(trx, organizationId, role))) throw new NotFoundError(`the ${role} checklist`)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, role),
          action: 'incident_checklist.deleted',
          before: { role },
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/incidents/:incidentId/checklist',
    {
      schema: {
        tags,
        summary: 'The incident’s checklist: each role with tasks, who holds it, and each task’s state (alerting viewer)',
        description:
          'An incident of a type that lists roles has those roles (and commander), each with the type’s tasks or else the organization’s checklist of the role; any other incident, the organization’s checklists.',
        params: Type.Object({ orgId: Type.String(), incidentId: Type.String() }),
        response: { 200: IncidentChecklist },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      return { data: await checklistOf(db, organizationId, incident.id, await checklistsOfIncident(db, organizationId, incident)) }
    },
  )

  for (const done of [true, false])
    app.route({
      method: done ? 'PUT' : 'DELETE',
      url: '/api/v1/organizations/:orgId/incidents/:incidentId/checklist/:role/:position',
      schema: {
        tags,
        summary: done
          ? 'Tick a task of the incident’s checklist (alerting responder)'
          : 'Untick a task of the incident’s checklist (alerting responder)',
        description: 'On the timeline (`task_done`, `task_undone`) with who did it; doing it twice changes nothing.',
        params: TaskParams,
        response: { 200: IncidentChecklist },
      },
      onRequest: responder,
      handler: async (request) => {
        const { organizationId } = membershipOf(request)
        const { incidentId, role, position } = request.params
        const actor = { userId: request.user.userId, audit: auditContextOf(request) }
        await db.transaction().execute((trx) => setTaskDone(trx, actor, organizationId, incidentId, role, position, done))
        const incident = await incidentOrNotFound(db, organizationId, incidentId)
        return { data: await checklistOf(db, organizationId, incident.id, await checklistsOfIncident(db, organizationId, incident)) }
      },
    })
}
