import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { findMembership, isUuid } from '@svc/auth'
import type { Database } from '@svc/db'
import { NotFoundError, invalidField } from '@svc/http'
import { deleteActionItem, findActionItem, insertActionItem, listActionItems, updateActionItem } from '../queries/rcas.js'
import { rcaOf, tags } from './routes.js'
import { ActionItem, ActionItemCreate, ActionItemPatch, ActionItemQuery, ItemParams, RcaParams, actionItemBody } from './schemas.js'

/** An assignee must be an active member of the organization (the membership rule's own query: suspended members are none). */
async function assertAssignable(database: Database, organizationId: string, userId: string | null | undefined): Promise<void> {
  if (userId === null || userId === undefined) return
  if (!(await findMembership(database, organizationId, userId))) {
    throw invalidField('assigneeUserId', 'must be a member of the organization')
  }
}

/**
 * Action items of an RCA: what must change so it does not happen again. They stay editable after
 * the document is published. Reading needs membership; writing the insights role responder.
 */
export const actionItemRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const member = app.requireOrgMember
  const writer = app.requireProductRole('insights', 'responder')
  const itemUrl = '/api/v1/organizations/:orgId/rcas/:rcaId/action-items/:itemId'

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
      return { data: (await listActionItems(db, rca.organizationId, rca.id, request.query)).map(actionItemBody) }
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
      await assertAssignable(app.database, rca.organizationId, request.body.assigneeUserId)
      const row = await insertActionItem(db, rca.organizationId, rca.id, request.body, request.user.userId)
      return reply.code(201).send(actionItemBody(row))
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
      await assertAssignable(app.database, rca.organizationId, request.body.assigneeUserId)
      const row = await updateActionItem(db, rca.organizationId, rca.id, itemId, request.body)
      if (!row) throw new NotFoundError('action item')
      return actionItemBody(row)
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
