import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { isUuid } from '@svc/auth'
import type { Executor } from '@svc/db'
import {
  deleteScimGroup,
  existingMembers,
  findScimGroup,
  groupNameTaken,
  insertScimGroup,
  listScimGroups,
  membersOfGroups,
  setGroupMembers,
  updateScimGroup,
  type ScimGroupRow,
} from '../../queries/scim-groups.js'
import { auditScimChange, principalOf } from '../audit.js'
import { ScimError, resourceNotFound } from '../errors.js'
import { IdParams, ListQuery, ListResponse, PatchBody, ReadQuery, ResourceBody, ScimGroup, scimErrors } from '../http-schemas.js'
import { filterOf, listResponse, pageOf } from '../list.js'
import { applyPatch, readOperations } from '../patch.js'
import { locationFor } from '../resource-meta.js'
import { groupSchema } from '../schema/definitions.js'
import { project } from '../schema/projection.js'
import { assertCurrentVersion, sendVersion } from '../versions.js'
import { groupFilterScope, groupResource, readGroup, type GroupInput } from './resource.js'

const tags = ['scim']
const config = { scim: true }

/** `excludedAttributes=members` (or `attributes` without it) spares loading the members. */
function wantsMembers(query: { attributes?: string; excludedAttributes?: string }): boolean {
  const names = (list?: string) => (list ?? '').split(',').map((name) => name.trim().toLowerCase().replace(/^.*:/, ''))
  if (query.attributes)
    return names(query.attributes).some((name) => name === 'members' || name.startsWith('members.') || name.startsWith('members['))
  return !names(query.excludedAttributes).includes('members')
}

/** SCIM Groups: named sets of the organization's members, which may grant product roles. */
export const scimGroupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db

  async function representation(executor: Executor, request: FastifyRequest, row: ScimGroupRow, withMembers = true) {
    const members = withMembers ? (await membersOfGroups(executor, principalOf(request).organizationId, [row.id])).get(row.id) : undefined
    return groupResource(row, members, locationFor(request))
  }

  async function lockedGroup(trx: Executor, request: FastifyRequest, id: string): Promise<ScimGroupRow> {
    const row = isUuid(id) ? await findScimGroup(trx, principalOf(request).organizationId, id, true) : undefined
    if (!row) throw resourceNotFound('Group', id)
    assertCurrentVersion(request, row.updatedAt)
    return row
  }

  /**
   * Stores a Group's name and members. Member ids that are not members of the organization are
   * left out rather than refused: providers send stale references, and one must not block the rest.
   */
  async function storeGroup(trx: Executor, request: FastifyRequest, groupId: string | undefined, input: GroupInput) {
    const { organizationId } = principalOf(request)
    if (await groupNameTaken(trx, organizationId, input.displayName, groupId)) {
      throw new ScimError(409, `a Group named ${input.displayName} already exists in this organization`, 'uniqueness')
    }
    const values = { displayName: input.displayName, externalId: input.externalId }
    const id = groupId ?? (await insertScimGroup(trx, organizationId, values))
    if (groupId) await updateScimGroup(trx, organizationId, groupId, values)
    const known = new Set(
      await existingMembers(
        trx,
        organizationId,
        input.members.map((member) => member.id),
      ),
    )
    const { added, removed } = await setGroupMembers(
      trx,
      organizationId,
      id,
      input.members.filter((member) => known.has(member.id)),
    )
    return { id, added, removed }
  }

  app.get(
    '/Groups',
    {
      config,
      schema: {
        tags,
        summary: 'List Groups, with filter, pagination and attribute selection',
        querystring: ListQuery,
        response: { 200: ListResponse(ScimGroup), ...scimErrors },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request)
      const page = pageOf(request.query)
      const { rows, total } = await listScimGroups(db, organizationId, filterOf(request.query, groupFilterScope), page)
      const members = wantsMembers(request.query)
        ? await membersOfGroups(
            db,
            organizationId,
            rows.map((row) => row.id),
          )
        : undefined
      const location = locationFor(request)
      return listResponse(
        rows.map((row) => project(groupResource(row, members?.get(row.id), location), request.query)),
        total,
        page.startIndex,
      )
    },
  )

  app.get(
    '/Groups/:id',
    {
      config,
      schema: { tags, summary: 'Get a Group', params: IdParams, querystring: ReadQuery, response: { 200: ScimGroup, ...scimErrors } },
    },
    async (request, reply) => {
      const { id } = request.params
      const row = isUuid(id) ? await findScimGroup(db, principalOf(request).organizationId, id) : undefined
      if (!row) throw resourceNotFound('Group', id)
      sendVersion(reply, row.updatedAt)
      return project(await representation(db, request, row, wantsMembers(request.query)), request.query)
    },
  )

  app.post(
    '/Groups',
    { config, schema: { tags, summary: 'Create a Group', body: ResourceBody, response: { 201: ScimGroup, ...scimErrors } } },
    async (request, reply) => {
      const input = readGroup(request.body)
      const row = await db.transaction().execute(async (trx) => {
        const { id, added } = await storeGroup(trx, request, undefined, input)
        await auditScimChange(trx, request, {
          entityType: 'scim_group',
          entityId: id,
          action: 'scim_group.created',
          after: { displayName: input.displayName, externalId: input.externalId, membersAdded: added },
        })
        return (await findScimGroup(trx, principalOf(request).organizationId, id)) as ScimGroupRow
      })
      sendVersion(reply, row.updatedAt)
      const location = locationFor(request)
      return reply
        .code(201)
        .header('location', location.of('Groups', row.id))
        .send(await representation(db, request, row))
    },
  )

  async function replaceGroup(trx: Executor, request: FastifyRequest, current: ScimGroupRow, input: GroupInput, action: string) {
    const { added, removed } = await storeGroup(trx, request, current.id, input)
    await auditScimChange(trx, request, {
      entityType: 'scim_group',
      entityId: current.id,
      action,
      before: { displayName: current.displayName, externalId: current.externalId },
      after: { displayName: input.displayName, externalId: input.externalId, membersAdded: added, membersRemoved: removed },
    })
    return (await findScimGroup(trx, principalOf(request).organizationId, current.id)) as ScimGroupRow
  }

  app.put(
    '/Groups/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Replace a Group, members included',
        params: IdParams,
        body: ResourceBody,
        response: { 200: ScimGroup, ...scimErrors },
      },
    },
    async (request, reply) => {
      const input = readGroup(request.body)
      const row = await db
        .transaction()
        .execute(async (trx) =>
          replaceGroup(trx, request, await lockedGroup(trx, request, request.params.id), input, 'scim_group.replaced'),
        )
      sendVersion(reply, row.updatedAt)
      return representation(db, request, row)
    },
  )

  app.patch(
    '/Groups/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Update a Group with PatchOp operations (member add, replace, remove), all or none',
        description: 'Answers 204; with `attributes` or `excludedAttributes` in the query, 200 and the Group.',
        params: IdParams,
        querystring: ReadQuery,
        body: PatchBody,
        response: { 200: ScimGroup, 204: Type.Null(), ...scimErrors },
      },
    },
    async (request, reply) => {
      const operations = readOperations(request.body, [groupSchema])
      const row = await db.transaction().execute(async (trx) => {
        const current = await lockedGroup(trx, request, request.params.id)
        const patched = applyPatch(await representation(trx, request, current), operations)
        return replaceGroup(trx, request, current, readGroup(patched), 'scim_group.updated')
      })
      sendVersion(reply, row.updatedAt)
      if (request.query.attributes === undefined && request.query.excludedAttributes === undefined) return reply.code(204).send(null)
      return project(await representation(db, request, row, wantsMembers(request.query)), request.query)
    },
  )

  app.delete(
    '/Groups/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a Group; its members lose what it granted',
        params: IdParams,
        response: { 204: Type.Null(), ...scimErrors },
      },
    },
    async (request, reply) => {
      await db.transaction().execute(async (trx) => {
        const current = await lockedGroup(trx, request, request.params.id)
        await deleteScimGroup(trx, principalOf(request).organizationId, current.id)
        await auditScimChange(trx, request, {
          entityType: 'scim_group',
          entityId: current.id,
          action: 'scim_group.deleted',
          before: { displayName: current.displayName, externalId: current.externalId },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
