import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { isUuid, membershipOf } from '@svc/auth'
import { type Executor, pageOf } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError } from '@svc/http'
import { OrgParams } from '../analyses/schemas.js'
import { deleteRca, findRca, insertRca, listRcas, lockRca, narrativeFields, updateRca, type RcaRow } from '../queries/rcas.js'
import { RCA_TRANSITIONS, Rca, RcaCreate, RcaParams, RcaPatch, RcaQuery, rcaBody, type RcaStatus } from './schemas.js'

export const tags = ['rcas']

/** The document of the organization in the path, or a 404 (another organization's included). */
export async function rcaOf(db: Executor, request: FastifyRequest, rcaId: string, options: { lock?: boolean } = {}): Promise<RcaRow> {
  const { organizationId } = membershipOf(request)
  const row = isUuid(rcaId) ? await (options.lock ? lockRca(db, organizationId, rcaId) : findRca(db, organizationId, rcaId)) : undefined
  if (!row) throw new NotFoundError('RCA')
  return row
}

/** A published document is frozen: only its action items still change. */
export function assertEditable(rca: RcaRow, what: string): void {
  if (rca.status === 'published') throw new ConflictError(`the RCA is published: ${what} cannot change (its action items still can)`)
}

/**
 * RCA documents: any member reads them; writing needs the insights role responder. Status moves
 * draft → in_review → published, and back from in_review to draft; other moves are a 409 naming
 * the allowed ones.
 */
export const rcaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const member = app.requireOrgMember
  const writer = app.requireProductRole('insights', 'responder')

  app.get(
    '/api/v1/organizations/:orgId/rcas',
    {
      schema: {
        tags,
        summary: 'List RCA documents, newest first (organization member)',
        params: OrgParams,
        querystring: RcaQuery,
        response: { 200: ListResponse(Rca) },
      },
      onRequest: member,
    },
    async (request) => {
      const { page, limit, ...filter } = request.query
      const { rows, total } = await listRcas(db, membershipOf(request).organizationId, filter, pageOf({ page, limit }))
      return { data: rows.map(rcaBody), meta: { page, limit, total } }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/rcas',
    {
      schema: {
        tags,
        summary: 'Create an RCA document, as a draft (insights responder)',
        params: OrgParams,
        body: RcaCreate,
        response: { 201: Rca },
      },
      onRequest: writer,
    },
    async (request, reply) => {
      const { title, ...narrative } = request.body
      const edited = narrativeFields.filter((field) => narrative[field] !== undefined && narrative[field] !== null)
      const row = await insertRca(db, membershipOf(request).organizationId, { title, ...narrative }, edited, request.user.userId)
      return reply.code(201).send(rcaBody(row))
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/rcas/:rcaId',
    {
      schema: { tags, summary: 'Get an RCA document (organization member)', params: RcaParams, response: { 200: Rca } },
      onRequest: member,
    },
    async (request) => rcaBody(await rcaOf(db, request, request.params.rcaId)),
  )

  app.patch(
    '/api/v1/organizations/:orgId/rcas/:rcaId',
    {
      schema: {
        tags,
        summary: 'Update an RCA document or move its status (insights responder)',
        description:
          'Status moves: draft → in_review, in_review → draft or published. A published document is frozen (409); its action items still change.',
        params: RcaParams,
        body: RcaPatch,
        response: { 200: Rca },
      },
      onRequest: writer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const row = await db.transaction().execute(async (trx) => {
        const current = await rcaOf(trx, request, request.params.rcaId, { lock: true })
        const { status, ...content } = request.body
        assertEditable(current, 'it')
        if (status !== undefined && status !== current.status) {
          const allowed = RCA_TRANSITIONS[current.status as RcaStatus]
          if (!allowed.includes(status)) {
            throw new ConflictError(`an RCA in ${current.status} cannot move to ${status}; allowed: ${allowed.join(', ') || 'none'}`)
          }
        }
        const edited = narrativeFields.filter((field) => content[field] !== undefined)
        return updateRca(
          trx,
          organizationId,
          current.id,
          { ...content, ...(status !== undefined && status !== current.status ? { status } : {}) },
          edited,
        )
      })
      return rcaBody(row)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/rcas/:rcaId',
    {
      schema: {
        tags,
        summary: 'Delete an RCA document with its links and action items (insights responder); not once published',
        params: RcaParams,
        response: { 204: Type.Null() },
      },
      onRequest: writer,
    },
    async (request, reply) => {
      await db.transaction().execute(async (trx) => {
        const current = await rcaOf(trx, request, request.params.rcaId, { lock: true })
        assertEditable(current, 'it')
        await deleteRca(trx, current.organizationId, current.id)
      })
      return reply.code(204).send(null)
    },
  )
}
