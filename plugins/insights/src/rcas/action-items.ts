import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { auditContextOf } from '@svc/audit'
import { findMembership, isUuid } from '@svc/auth'
import type { Database, Executor } from '@svc/db'
import { NotFoundError, invalidField } from '@svc/http'
import { actionItemTickets, openActionItemTicket } from '@svc/plugin-alerting'
import { deleteActionItem, findActionItem, insertActionItem, listActionItems, updateActionItem } from '../queries/rcas.js'
import { rcaOf, tags } from './routes.js'
import { ActionItem, ActionItemCreate, ActionItemPatch, ActionItemQuery, ItemParams, RcaParams, actionItemBody } from './schemas.js'
import type { ActionItemRow } from '../queries/rcas.js'

/** An assignee must be an active member of the organization (the membership rule's own query: suspended members are none). */
async function assertAssignable(database: Database, organizationId: string, userId: string | null | undefined): Promise<void> {
  if (userId === null || userId === undefined) return
  if (!(await findMembership(database, organizationId, userId))) {
    throw invalidField('assigneeUserId', 'must be a member of the organization')
  }
}

/** Action items as answered, each with its ticket (alerting keeps tickets: decision 0031, "Action items as tickets"). */
async function itemBodies(db: Executor, organizationId: string, rows: ActionItemRow[]) {
  const tickets = await actionItemTickets(
    db,
    organizationId,
    rows.map((row) => row.id),
  )
  return rows.map((row) => actionItemBody(row, tickets.get(row.id) ?? null))
}
const itemBody = async (db: Executor, organizationId: string, row: ActionItemRow) => (await itemBodies(db, organizationId, [row]))[0]!

/**
 * Action items of an RCA: what must change so it does not happen again. They stay editable after
 * the document is published; each may get a ticket in one of the organization's trackers, whose
 * done makes the item done. Reading needs membership; writing the insights role responder.
 */
export const actionItemRoutes: FastifyPluginAsyncTypebox<{ productUrl: string }> = async (app, { productUrl }) => {
  const db = app.database.db
  const member = app.requireOrgMember
  const writer = app.requireProductRole('insights', 'responder')
  const itemUrl = '/api/v1/organizations/:orgId/rcas/:rcaId/action-items/:itemId'
  /** Opens the item's ticket in the tracker, in the caller's transaction. */
  const openTicket = (
    trx: Executor,
    request: FastifyRequest,
    rca: { id: string; organizationId: string; title: string },
    item: ActionItemRow,
    trackerId: string,
  ) =>
    openActionItemTicket(
      trx,
      app.jobs,
      { userId: request.user.userId, audit: auditContextOf(request) },
      rca.organizationId,
      {
        id: item.id,
        title: item.title,
        description: item.description,
        rca: { title: rca.title, url: `${productUrl}/api/v1/organizations/${rca.organizationId}/rcas/${rca.id}` },
      },
      trackerId,
    )

  app.get(
    '/api/v1/organizations/:orgId/rcas/:rcaId/action-items',
    {
      schema: {
        tags,
        summary: 'List the action items of an RCA, oldest first (organization member)',
        params: RcaParams,
        querystring: ActionItemQuery,
        response: { 200: Type.Object({ data: Type.Array(ActionItem) }) },
      },
      onRequest: member,
    },
    async (request) => {
      const rca = await rcaOf(db, request, request.params.rcaId)
      return { data: await itemBodies(db, rca.organizationId, await listActionItems(db, rca.organizationId, rca.id, request.query)) }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/rcas/:rcaId/action-items',
    {
      schema: {
        tags,
        summary: 'Create an action item (insights responder)',
        params: RcaParams,
        body: ActionItemCreate,
        response: { 201: ActionItem },
      },
      onRequest: writer,
    },
    async (request, reply) => {
      const rca = await rcaOf(db, request, request.params.rcaId)
      const { trackerId, ...content } = request.body
      await assertAssignable(app.database, rca.organizationId, content.assigneeUserId)
      const row = await db.transaction().execute(async (trx) => {
        const item = await insertActionItem(trx, rca.organizationId, rca.id, content, request.user.userId)
        if (trackerId) await openTicket(trx, request, rca, item, trackerId)
        return item
      })
      return reply.code(201).send(await itemBody(db, rca.organizationId, row))
    },
  )

  app.patch(
    itemUrl,
    {
      schema: {
        tags,
        summary: 'Update an action item (insights responder); done stamps completedAt',
        params: ItemParams,
        body: ActionItemPatch,
        response: { 200: ActionItem },
      },
      onRequest: writer,
    },
    async (request) => {
      const rca = await rcaOf(db, request, request.params.rcaId)
      const { itemId } = request.params
      if (!isUuid(itemId) || !(await findActionItem(db, rca.organizationId, rca.id, itemId))) throw new NotFoundError('action item')
      const { trackerId, ...changes } = request.body
      await assertAssignable(app.database, rca.organizationId, changes.assigneeUserId)
      const row = await db.transaction().execute(async (trx) => {
        const item = await updateActionItem(trx, rca.organizationId, rca.id, itemId, changes)
        if (!item) throw new NotFoundError('action item')
        if (trackerId) await openTicket(trx, request, rca, item, trackerId)
        return item
      })
      return itemBody(db, rca.organizationId, row)
    },
  )

  app.delete(
    itemUrl,
    {
      schema: { tags, summary: 'Delete an action item (insights responder)', params: ItemParams, response: { 204: Type.Null() } },
      onRequest: writer,
    },
    async (request, reply) => {
      const rca = await rcaOf(db, request, request.params.rcaId)
      const removed = isUuid(request.params.itemId)
        ? await deleteActionItem(db, rca.organizationId, rca.id, request.params.itemId)
        : undefined
      if (!removed) throw new NotFoundError('action item')
      return reply.code(204).send(null)
    },
  )
}
