import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IANAZone } from 'luxon'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, invalidField } from '@svc/http'
import { removeTargetEverywhere } from '../policies/targets.js'
import { activeMembersAmong } from '../people.js'
import {
  deleteOverride,
  deleteSchedule,
  findSchedule,
  insertOverride,
  insertSchedule,
  listSchedules,
  overridesBetween,
  scheduleNameTaken,
  storedLayers,
  updateSchedule,
  type OverrideRow,
  type ScheduleRow,
} from './queries.js'
import { scheduleOnCall, scheduleShifts } from './on-call.js'
import {
  CreateOverride,
  CreateSchedule,
  MAX_RANGE_DAYS,
  OnCall,
  OnCallQuery,
  Override,
  OverrideParams,
  OverrideQuery,
  RangeQuery,
  Schedule,
  ScheduleParams,
  ScheduleQuery,
  ScheduleSummary,
  ShiftList,
  UpdateSchedule,
  type LayerBody,
} from './schemas.js'

const tags = ['schedules']
const OrgParams = Type.Object({ orgId: Type.String() })

const layersOf = (row: ScheduleRow) => storedLayers(row.layers)

function scheduleFields(row: ScheduleRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    timeZone: row.timeZone,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

const scheduleBody = (row: ScheduleRow) => ({ ...scheduleFields(row), layers: layersOf(row) })

function overrideBody(row: OverrideRow) {
  return {
    id: row.id,
    userId: row.userId,
    email: row.email,
    start: row.startsAt.toISOString(),
    end: row.endsAt.toISOString(),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
  }
}

/** The rules the schema cannot say: a real time zone, and rotations of active members of the organization. */
async function checkSchedule(db: Executor, organizationId: string, timeZone: string | undefined, layers: LayerBody[] | undefined) {
  if (timeZone !== undefined && !IANAZone.isValidZone(timeZone))
    throw invalidField('timeZone', 'must be an IANA time zone such as Europe/Berlin')
  if (!layers) return
  const active = await activeMembersAmong(db, organizationId, [...new Set(layers.flatMap((layer) => layer.users))])
  layers.forEach((layer, index) =>
    layer.users.forEach((userId, position) => {
      if (!active.has(userId)) throw invalidField(`layers/${index}/users/${position}`, 'is not an active member of the organization')
    }),
  )
}

/** A range of at most MAX_RANGE_DAYS, `to` after `from`: 400 naming `to` otherwise. */
function rangeOf(query: { from: string; to: string }) {
  const [from, to] = [new Date(query.from), new Date(query.to)]
  if (to <= from) throw invalidField('to', 'must be after from', 'querystring')
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 86_400_000) {
    throw invalidField('to', `must be at most ${MAX_RANGE_DAYS} days after from`, 'querystring')
  }
  return { from, to }
}

/**
 * On-call schedules: layers of rotations in a time zone, overrides above them, and the
 * final shifts they make (oncall/schedules/rotation.ts). Reading needs alerting viewer, changing
 * alerting manager; every change writes its audit entry in the same transaction.
 */
export const scheduleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const scheduleOf = async (executor: Executor, organizationId: string, scheduleId: string, forUpdate = false) => {
    const row = isUuid(scheduleId) ? await findSchedule(executor, organizationId, scheduleId, forUpdate) : undefined
    if (!row) throw new NotFoundError('schedule')
    return row
  }
  const audit = (request: Parameters<typeof auditContextOf>[0], organizationId: string, scheduleId: string) => ({
    context: auditContextOf(request),
    entry: { organizationId, product: 'alerting' as const, entityType: 'schedule', entityId: scheduleId },
  })

  app.get(
    '/api/v1/organizations/:orgId/schedules',
    {
      schema: {
        tags,
        summary: 'List schedules (alerting viewer)',
        params: OrgParams,
        querystring: ScheduleQuery,
        response: { 200: ListResponse(ScheduleSummary) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, q } = request.query
      const { rows, total } = await listSchedules(db, membershipOf(request).organizationId, q, pageOf({ page, limit }))
      return { data: rows.map((row) => ({ ...scheduleFields(row), layerCount: layersOf(row).length })), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/schedules/:scheduleId',
    {
      schema: { tags, summary: 'A schedule with its layers (alerting viewer)', params: ScheduleParams, response: { 200: Schedule } },
      onRequest: viewer,
    },
    async (request) => scheduleBody(await scheduleOf(db, membershipOf(request).organizationId, request.params.scheduleId)),
  )

  app.post(
    '/api/v1/organizations/:orgId/schedules',
    {
      schema: {
        tags,
        summary: 'Create a schedule (alerting manager)',
        description:
          'At least one layer, each rotating at least one active member of the organization. Names are unique in the organization whatever the letter case (409).',
        params: OrgParams,
        body: CreateSchedule,
        response: { 201: Schedule },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { timeZone, layers, description = null } = request.body
      const name = request.body.name.trim()
      const created = await db.transaction().execute(async (trx) => {
        await checkSchedule(trx, organizationId, timeZone, layers)
        if (await scheduleNameTaken(trx, organizationId, name)) throw new ConflictError(`a schedule named ${name} exists`)
        const schedule = await insertSchedule(trx, {
          organizationId,
          name,
          description,
          timeZone,
          layers: layers,
          createdBy: request.user.userId,
        })
        const { context, entry } = audit(request, organizationId, schedule.id)
        await recordAudit(trx, context, { ...entry, action: 'schedule.created', after: { name, description, timeZone, layers } })
        return schedule
      })
      return reply.code(201).send(scheduleBody(created))
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/schedules/:scheduleId',
    {
      schema: {
        tags,
        summary: 'Change a schedule: name, description, time zone, or its layers replaced whole (alerting manager)',
        params: ScheduleParams,
        body: UpdateSchedule,
        response: { 200: Schedule },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { layers, ...rest } = request.body
      const change = { ...rest, ...(rest.name ? { name: rest.name.trim() } : {}), ...(layers ? { layers: layers } : {}) }
      return scheduleBody(
        await db.transaction().execute(async (trx) => {
          const before = await scheduleOf(trx, organizationId, request.params.scheduleId, true)
          await checkSchedule(trx, organizationId, rest.timeZone, layers)
          if (change.name && (await scheduleNameTaken(trx, organizationId, change.name, before.id))) {
            throw new ConflictError(`a schedule named ${change.name} exists`)
          }
          const after = await updateSchedule(trx, organizationId, before.id, change)
          if (!after) throw new NotFoundError('schedule')
          const { context, entry } = audit(request, organizationId, before.id)
          const state = (row: ScheduleRow) => ({ name: row.name, description: row.description, timeZone: row.timeZone, layers: row.layers })
          await recordAudit(trx, context, { ...entry, action: 'schedule.updated', before: state(before), after: state(after) })
          return after
        }),
      )
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/schedules/:scheduleId',
    {
      schema: {
        tags,
        summary: 'Delete a schedule and its overrides; escalation policies naming it lose that target, audited (alerting manager)',
        params: ScheduleParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await scheduleOf(trx, organizationId, request.params.scheduleId, true)
        await removeTargetEverywhere(trx, auditContextOf(request), organizationId, { type: 'schedule', id: before.id })
        if (!(await deleteSchedule(trx, organizationId, before.id))) throw new NotFoundError('schedule')
        const { context, entry } = audit(request, organizationId, before.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'schedule.deleted',
          before: { name: before.name, timeZone: before.timeZone, layers: before.layers },
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/schedules/:scheduleId/on-call',
    {
      schema: {
        tags,
        summary: 'Who is on call at a moment (alerting viewer)',
        params: ScheduleParams,
        querystring: OnCallQuery,
        response: { 200: OnCall },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const schedule = await scheduleOf(db, organizationId, request.params.scheduleId)
      const at = request.query.at ? new Date(request.query.at) : new Date()
      return { at: at.toISOString(), onCall: (await scheduleOnCall(db, organizationId, schedule, at)) ?? null }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/schedules/:scheduleId/shifts',
    {
      schema: {
        tags,
        summary: 'The final shifts in a range: layers and overrides applied, one person’s adjacent shifts merged (alerting viewer)',
        description: `Shifts are cut to the range, which may span at most ${MAX_RANGE_DAYS} days. Times nobody covers are absent.`,
        params: ScheduleParams,
        querystring: RangeQuery,
        response: { 200: ShiftList },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { from, to } = rangeOf(request.query)
      const schedule = await scheduleOf(db, organizationId, request.params.scheduleId)
      const data = await scheduleShifts(db, organizationId, schedule, from, to)
      return { from: from.toISOString(), to: to.toISOString(), timeZone: schedule.timeZone, data }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/schedules/:scheduleId/overrides',
    {
      schema: {
        tags,
        summary: 'A schedule’s overrides, earliest first; from/to keep those overlapping the range (alerting viewer)',
        params: ScheduleParams,
        querystring: OverrideQuery,
        response: { 200: Type.Object({ data: Type.Array(Override) }) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const schedule = await scheduleOf(db, organizationId, request.params.scheduleId)
      const { from, to } = request.query
      const rows = await overridesBetween(db, organizationId, schedule.id, from ? new Date(from) : undefined, to ? new Date(to) : undefined)
      return { data: rows.map(overrideBody) }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/schedules/:scheduleId/overrides',
    {
      schema: {
        tags,
        summary: 'Put someone on call instead of the layers for a range (alerting manager)',
        description: 'The user must be an active member of the organization; a schedule’s overrides may not overlap (400 naming start).',
        params: ScheduleParams,
        body: CreateOverride,
        response: { 201: Override },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { userId } = request.body
      const [start, end] = [new Date(request.body.start), new Date(request.body.end)]
      if (end <= start) throw invalidField('end', 'must be after start')
      const created = await db.transaction().execute(async (trx) => {
        // The schedule's row lock keeps two overlapping overrides from being added at once.
        const schedule = await scheduleOf(trx, organizationId, request.params.scheduleId, true)
        if (!(await activeMembersAmong(trx, organizationId, [userId])).has(userId)) {
          throw invalidField('userId', 'is not an active member of the organization')
        }
        const [overlapping] = await overridesBetween(trx, organizationId, schedule.id, start, end)
        if (overlapping) {
          throw invalidField(
            'start',
            `overlaps override ${overlapping.id} (${overlapping.startsAt.toISOString()} to ${overlapping.endsAt.toISOString()})`,
          )
        }
        const id = await insertOverride(trx, {
          organizationId,
          scheduleId: schedule.id,
          userId,
          startsAt: start,
          endsAt: end,
          createdBy: request.user.userId,
        })
        const { context, entry } = audit(request, organizationId, schedule.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'schedule.override_created',
          after: { overrideId: id, userId, start: start.toISOString(), end: end.toISOString() },
        })
        const [row] = (await overridesBetween(trx, organizationId, schedule.id, start, end)).filter((override) => override.id === id)
        if (!row) throw new NotFoundError('override')
        return row
      })
      return reply.code(201).send(overrideBody(created))
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/schedules/:scheduleId/overrides/:overrideId',
    {
      schema: { tags, summary: 'Remove an override (alerting manager)', params: OverrideParams, response: { 204: Type.Null() } },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const schedule = await scheduleOf(trx, organizationId, request.params.scheduleId, true)
        const removed = isUuid(request.params.overrideId)
          ? await deleteOverride(trx, organizationId, schedule.id, request.params.overrideId)
          : undefined
        if (!removed) throw new NotFoundError('override')
        const { context, entry } = audit(request, organizationId, schedule.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'schedule.override_deleted',
          before: {
            overrideId: removed.id,
            userId: removed.userId,
            start: removed.startsAt.toISOString(),
            end: removed.endsAt.toISOString(),
          },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
