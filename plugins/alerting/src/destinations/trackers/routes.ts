import { randomBytes, randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { OutboundConfig, SecretSealer } from '@svc/config'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, PaginationQuery, invalidField } from '@svc/http'
import { TargetRefused, checkTarget } from '../http.js'
import { trackerEventsPath, withoutTrailingSlashes } from './paths.js'
import { deleteTracker, findTracker, insertTracker, listTrackers, trackerNameTaken, updateTracker, type TrackerRow } from './queries.js'
import { CreateTracker, Tracker, TrackerParams, TrackerWithSecret, UpdateTracker } from './schemas.js'
import { sealTrackerValue } from './seal.js'

export interface TrackerRouteOptions {
  outbound: OutboundConfig
  sealer: SecretSealer
  /** The product API's public base URL: where trackers' webhooks send. */
  productUrl: string
}

const tags = ['trackers']
const OrgParams = Type.Object({ orgId: Type.String() })
const base = '/api/v1/organizations/:orgId/trackers'

const audited = (row: TrackerRow) => ({
  name: row.name,
  kind: row.kind,
  siteUrl: row.siteUrl,
  accountEmail: row.accountEmail,
  project: row.project,
  issueType: row.issueType,
  enabled: row.enabled,
})

/**
 * Ticket trackers (decision 0031, "Follow-ups in trackers"): Jira Cloud and Linear, where an
 * incident's follow-ups become tickets. Reading needs alerting viewer, changing alerting manager;
 * credentials are sealed and never answered; every change is audited.
 */
export const trackerRoutes: FastifyPluginAsyncTypebox<TrackerRouteOptions> = async (app, { outbound, sealer, productUrl }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const body = (row: TrackerRow) => ({
    id: row.id,
    name: row.name,
    kind: row.kind as 'jira' | 'linear',
    siteUrl: row.siteUrl,
    accountEmail: row.accountEmail,
    project: row.project,
    issueType: row.issueType,
    enabled: row.enabled,
    webhookUrl: `${productUrl}${trackerEventsPath(row.id)}`,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  })
  const trackerOf = async (executor: Executor, organizationId: string, trackerId: string, forUpdate = false) => {
    const row = isUuid(trackerId) ? await findTracker(executor, organizationId, trackerId, forUpdate) : undefined
    if (!row) throw new NotFoundError('tracker')
    return row
  }
  const entry = (organizationId: string, id: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'tracker',
    entityId: id,
  })
  const checkUrl = async (field: string, url: string) => {
    try {
      await checkTarget(url, outbound)
    } catch (error) {
      if (error instanceof TargetRefused) throw invalidField(field, error.message)
      throw error
    }
  }

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'List ticket trackers (alerting viewer)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(Tracker) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listTrackers(db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return { data: rows.map(body), meta: { page, limit, total } }
    },
  )

  app.get(
    `${base}/:trackerId`,
    {
      schema: { tags, summary: 'A ticket tracker (alerting viewer)', params: TrackerParams, response: { 200: Tracker } },
      onRequest: viewer,
    },
    async (request) => body(await trackerOf(db, membershipOf(request).organizationId, request.params.trackerId)),
  )

  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Connect a ticket tracker: Jira Cloud or Linear (alerting manager)',
        description:
          'Answers `webhookUrl` and, once, `webhookSecret`: register a webhook for issue updates in the tracker with them, and ticket changes come back to their follow-ups.',
        params: OrgParams,
        body: CreateTracker,
        response: { 201: TrackerWithSecret },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const given = request.body
      const name = given.name.trim()
      const id = randomUUID()
      const webhookSecret = given.webhookSecret ?? randomBytes(24).toString('base64url')
      if (given.kind === 'jira') await checkUrl('siteUrl', given.siteUrl)
      else if (given.apiUrl) await checkUrl('apiUrl', given.apiUrl)
      const values =
        given.kind === 'jira'
          ? {
              siteUrl: withoutTrailingSlashes(given.siteUrl),
              accountEmail: given.accountEmail,
              project: given.projectKey,
              issueType: given.issueType ?? 'Task',
              credential: sealTrackerValue(sealer, organizationId, id, 'credential', given.apiToken),
            }
          : {
              siteUrl: given.apiUrl ?? null,
              accountEmail: null,
              project: given.teamId,
              issueType: null,
              credential: sealTrackerValue(sealer, organizationId, id, 'credential', given.apiKey),
            }
      const created = await db.transaction().execute(async (trx) => {
        if (await trackerNameTaken(trx, organizationId, name)) throw new ConflictError(`a tracker named ${name} exists`)
        const row = await insertTracker(
          trx,
          organizationId,
          {
            id,
            name,
            kind: given.kind,
            ...values,
            webhookSecret: sealTrackerValue(sealer, organizationId, id, 'webhookSecret', webhookSecret),
          },
          request.user.userId,
        )
        await recordAudit(trx, auditContextOf(request), { ...entry(organizationId, id), action: 'tracker.created', after: audited(row) })
        return row
      })
      return reply.code(201).send({ ...body(created), webhookSecret })
    },
  )

  app.patch(
    `${base}/:trackerId`,
    {
      schema: {
        tags,
        summary: 'Change a ticket tracker: its name, project, issue type, credential, or whether it is used (alerting manager)',
        params: TrackerParams,
        body: UpdateTracker,
        response: { 200: Tracker },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { name, credential, ...change } = request.body
      const updated = await db.transaction().execute(async (trx) => {
        const before = await trackerOf(trx, organizationId, request.params.trackerId, true)
        const trimmed = name?.trim()
        if (trimmed && (await trackerNameTaken(trx, organizationId, trimmed, before.id)))
          throw new ConflictError(`a tracker named ${trimmed} exists`)
        const row = await updateTracker(trx, organizationId, before.id, {
          ...change,
          ...(trimmed ? { name: trimmed } : {}),
          ...(credential ? { credential: sealTrackerValue(sealer, organizationId, before.id, 'credential', credential) } : {}),
        })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'tracker.updated',
          before: audited(before),
          after: { ...audited(row), ...(credential ? { credential: 'replaced' } : {}) },
        })
        return row
      })
      return body(updated)
    },
  )

  app.delete(
    `${base}/:trackerId`,
    {
      schema: {
        tags,
        summary: 'Disconnect a ticket tracker (alerting manager); follow-ups keep their ticket links',
        params: TrackerParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await trackerOf(trx, organizationId, request.params.trackerId, true)
        await deleteTracker(trx, organizationId, before.id)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'tracker.deleted',
          before: audited(before),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
