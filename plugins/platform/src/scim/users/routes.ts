import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { isUuid } from '@svc/auth'
import type { Executor } from '@svc/db'
import { publish } from '@svc/events'
import { lockOrganization } from '@svc/members'
import {
  accountForScimUser,
  deleteScimUser,
  findScimUser,
  groupsOfMembers,
  insertScimUser,
  listScimUsers,
  otherActiveOwners,
  replaceScimUser,
  userNameTaken,
  type ScimUserRow,
} from '../../queries/scim-users.js'
import { auditScimChange, principalOf } from '../audit.js'
import { ScimError, resourceNotFound } from '../errors.js'
import { IdParams, ListQuery, ListResponse, PatchBody, ReadQuery, ResourceBody, ScimUser, scimErrors } from '../http-schemas.js'
import { filterOf, listResponse, pageOf } from '../list.js'
import { applyPatch, readOperations } from '../patch.js'
import { locationFor } from '../resource-meta.js'
import { enterpriseUserSchema, userSchema } from '../schema/definitions.js'
import { project } from '../schema/projection.js'
import { assertCurrentVersion, sendVersion } from '../versions.js'
import { userFilterScope } from './filter-scope.js'
import { readUser, userResource, type UserInput } from './resource.js'

const tags = ['scim']
const config = { scim: true }

/** What the audit log keeps of a User: its keys, not the whole document. */
function audited(user: { userName: string; externalId: string | null; active: boolean }) {
  return { userName: user.userName, externalId: user.externalId, active: user.active }
}

/** SCIM Users (RFC 7644 §3): the memberships of the token's organization. */
export const scimUserRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db

  async function representation(executor: Executor, request: FastifyRequest, row: ScimUserRow) {
    const groups = await groupsOfMembers(executor, principalOf(request).organizationId, [row.id])
    return userResource(row, groups.get(row.id) ?? [], locationFor(request))
  }

  /**
   * The User to change, locked. The organization's row is locked first, as every membership
   * change does (decision 0005): SCIM and the platform's member routes take locks in one order,
   * and the owner checks below see a settled list of owners.
   */
  async function lockedUser(trx: Executor, request: FastifyRequest, id: string): Promise<ScimUserRow> {
    const { organizationId } = principalOf(request)
    await lockOrganization(trx, organizationId)
    const row = isUuid(id) ? await findScimUser(trx, organizationId, id, true) : undefined
    if (!row) throw resourceNotFound('User', id)
    // An admin's token provisions members; only an owner's may touch an owner (decision 0012).
    if (row.role === 'owner' && principalOf(request).creatorRole !== 'owner') {
      throw new ScimError(
        403,
        'this token was created by an admin: only an owner’s token can change, suspend or deprovision an owner',
        'mutability',
      )
    }
    assertCurrentVersion(request, row.updatedAt)
    return row
  }

  /** An owner stays reachable: the last active owner can be neither suspended nor deprovisioned. */
  async function assertOwnerMayLeave(trx: Executor, organizationId: string, row: ScimUserRow, what: string): Promise<void> {
    if (row.role !== 'owner') return
    if ((await otherActiveOwners(trx, organizationId, row.id)) === 0) {
      throw new ScimError(400, `the organization's last owner cannot be ${what}: transfer ownership in the platform first`, 'mutability')
    }
  }

  async function assertUniqueUserName(trx: Executor, organizationId: string, userName: string, exceptMemberId?: string): Promise<void> {
    if (await userNameTaken(trx, organizationId, userName, exceptMemberId)) {
      throw new ScimError(409, `userName ${userName} is already taken in this organization`, 'uniqueness')
    }
  }

  /** Replaces a User with `input` (PUT, and PATCH after applying its operations). */
  async function replaceUser(trx: Executor, request: FastifyRequest, row: ScimUserRow, input: UserInput, action: string): Promise<void> {
    const { organizationId } = principalOf(request)
    await assertUniqueUserName(trx, organizationId, input.userName, row.id)
    const wasActive = row.suspendedAt === null
    if (wasActive && !input.active) await assertOwnerMayLeave(trx, organizationId, row, 'suspended')
    await replaceScimUser(trx, organizationId, row.id, input)
    await auditScimChange(trx, request, {
      entityType: 'scim_user',
      entityId: row.id,
      action,
      before: audited({ ...row, active: wasActive }),
      after: audited(input),
    })
  }

  app.get(
    '/Users',
    {
      config,
      schema: {
        tags,
        summary: 'List Users, with filter, pagination and attribute selection',
        querystring: ListQuery,
        response: { 200: ListResponse(ScimUser), ...scimErrors },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request)
      const page = pageOf(request.query)
      const { rows, total } = await listScimUsers(db, organizationId, filterOf(request.query, userFilterScope), page)
      const groups = await groupsOfMembers(
        db,
        organizationId,
        rows.map((row) => row.id),
      )
      const location = locationFor(request)
      const resources = rows.map((row) => project(userResource(row, groups.get(row.id) ?? [], location), request.query))
      return listResponse(resources, total, page.startIndex)
    },
  )

  app.get(
    '/Users/:id',
    {
      config,
      schema: { tags, summary: 'Get a User', params: IdParams, querystring: ReadQuery, response: { 200: ScimUser, ...scimErrors } },
    },
    async (request, reply) => {
      const { id } = request.params
      const row = isUuid(id) ? await findScimUser(db, principalOf(request).organizationId, id) : undefined
      if (!row) throw resourceNotFound('User', id)
      sendVersion(reply, row.updatedAt)
      return project(await representation(db, request, row), request.query)
    },
  )

  app.post(
    '/Users',
    {
      config,
      schema: {
        tags,
        summary: 'Create a User: a new member of the organization, linked to the platform account with its e-mail',
        body: ResourceBody,
        response: { 201: ScimUser, ...scimErrors },
      },
    },
    async (request, reply) => {
      const input = readUser(request.body)
      const { organizationId, tokenId } = principalOf(request)
      const created = await db.transaction().execute(async (trx) => {
        await assertUniqueUserName(trx, organizationId, input.userName)
        const userId = await accountForScimUser(trx, organizationId, input.email)
        const id = await insertScimUser(trx, organizationId, userId, tokenId, input)
        await auditScimChange(trx, request, { entityType: 'scim_user', entityId: id, action: 'scim_user.created', after: audited(input) })
        return (await findScimUser(trx, organizationId, id)) as ScimUserRow
      })
      const resource = userResource(created, [], locationFor(request))
      sendVersion(reply, created.updatedAt)
      return reply.code(201).header('location', locationFor(request).of('Users', created.id)).send(resource)
    },
  )

  app.put(
    '/Users/:id',
    {
      config,
      schema: { tags, summary: 'Replace a User', params: IdParams, body: ResourceBody, response: { 200: ScimUser, ...scimErrors } },
    },
    async (request, reply) => {
      const input = readUser(request.body)
      const row = await db.transaction().execute(async (trx) => {
        const current = await lockedUser(trx, request, request.params.id)
        await replaceUser(trx, request, current, input, 'scim_user.replaced')
        return (await findScimUser(trx, principalOf(request).organizationId, current.id)) as ScimUserRow
      })
      sendVersion(reply, row.updatedAt)
      return representation(db, request, row)
    },
  )

  app.patch(
    '/Users/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Update a User with PatchOp operations, all or none',
        description: 'Answers 204; with `attributes` or `excludedAttributes` in the query, 200 and the User.',
        params: IdParams,
        querystring: ReadQuery,
        body: PatchBody,
        response: { 200: ScimUser, 204: Type.Null(), ...scimErrors },
      },
    },
    async (request, reply) => {
      const operations = readOperations(request.body, [userSchema, enterpriseUserSchema])
      const row = await db.transaction().execute(async (trx) => {
        const current = await lockedUser(trx, request, request.params.id)
        const patched = applyPatch(await representation(trx, request, current), operations)
        await replaceUser(trx, request, current, readUser(patched), 'scim_user.updated')
        return (await findScimUser(trx, principalOf(request).organizationId, current.id)) as ScimUserRow
      })
      sendVersion(reply, row.updatedAt)
      if (request.query.attributes === undefined && request.query.excludedAttributes === undefined) return reply.code(204).send(null)
      return project(await representation(db, request, row), request.query)
    },
  )

  app.delete(
    '/Users/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Deprovision a User: the membership is removed, the audit log kept',
        params: IdParams,
        response: { 204: Type.Null(), ...scimErrors },
      },
    },
    async (request, reply) => {
      const { organizationId } = principalOf(request)
      await db.transaction().execute(async (trx) => {
        const current = await lockedUser(trx, request, request.params.id)
        await assertOwnerMayLeave(trx, organizationId, current, 'deprovisioned')
        await deleteScimUser(trx, organizationId, current.id)
        await publish(request.server.jobs, trx, 'member.removed', { organizationId, userId: current.userId })
        await auditScimChange(trx, request, {
          entityType: 'scim_user',
          entityId: current.id,
          action: 'scim_user.deleted',
          before: audited({ ...current, active: current.suspendedAt === null }),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
