import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { isUuid, membershipOf } from '@svc/auth'
import { ConflictError, NotFoundError } from '@svc/http'
import { incidentContext } from '../queries/evidence.js'
import { deleteLink, insertLink, listLinks } from '../queries/rcas.js'
import { readableSources } from './readable.js'
import { assertEditable, rcaOf, tags } from './routes.js'
import { IncidentLink, LinkCreate, LinkParams, RcaParams, linkBody } from './schemas.js'

/** What a link's 404 says: which kinds of incident an id may name. */
export const UNKNOWN_INCIDENT =
  'incident: with sourceProduct alerting the id names an incident (INC-n) or an alert, with statuspages a status page incident; this one was'

/** Links from an RCA to the incidents it explains, on any surface, by incident reference. */
export const rcaLinkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const member = app.requireOrgMember
  const writer = app.requireProductRole('insights', 'responder')

  app.get(
    '/api/v1/organizations/:orgId/rcas/:rcaId/incidents',
    {
      schema: {
        tags,
        summary: 'The incidents an RCA is linked to (organization member)',
        params: RcaParams,
        response: { 200: Type.Object({ data: Type.Array(IncidentLink) }) },
      },
      onRequest: member,
    },
    async (request) => {
      const rca = await rcaOf(db, request, request.params.rcaId)
      const readable = await readableSources(request)
      return { data: (await listLinks(db, rca.organizationId, rca.id)).map((row) => linkBody(row, readable)) }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/rcas/:rcaId/incidents',
    {
      schema: {
        tags,
        summary: 'Link an incident (insights responder)',
        description:
          'With `alerting`, `incidentId` names an incident (INC-n) or an alert; with `statuspages`, a status page incident. It must exist in the organization (a 404 that names the kinds otherwise); linking it twice is a 409; a published RCA is frozen (409).',
        params: RcaParams,
        body: LinkCreate,
        response: { 201: IncidentLink },
      },
      onRequest: writer,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const readable = await readableSources(request)
      // An incident the caller may not read on its surface is as unknown as a missing one.
      if (!readable.has(request.body.sourceProduct)) throw new NotFoundError(UNKNOWN_INCIDENT)
      const link = await db.transaction().execute(async (trx) => {
        const rca = await rcaOf(trx, request, request.params.rcaId, { lock: true })
        assertEditable(rca, 'its incidents')
        if (!(await incidentContext(trx, { organizationId, ...request.body }))) throw new NotFoundError(UNKNOWN_INCIDENT)
        const created = await insertLink(trx, organizationId, rca.id, request.body, request.user.userId)
        if (!created) throw new ConflictError('the incident is already linked to this RCA')
        const links = await listLinks(trx, organizationId, rca.id)
        return links.find((row) => row.id === created.id)
      })
      if (!link) throw new NotFoundError('link')
      return reply.code(201).send(linkBody(link, readable))
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/rcas/:rcaId/incidents/:linkId',
    {
      schema: {
        tags,
        summary: 'Unlink an incident (insights responder); not once published',
        params: LinkParams,
        response: { 204: Type.Null() },
      },
      onRequest: writer,
    },
    async (request, reply) => {
      await db.transaction().execute(async (trx) => {
        const rca = await rcaOf(trx, request, request.params.rcaId, { lock: true })
        assertEditable(rca, 'its incidents')
        const removed = isUuid(request.params.linkId) ? await deleteLink(trx, rca.organizationId, rca.id, request.params.linkId) : undefined
        if (!removed) throw new NotFoundError('link')
      })
      return reply.code(204).send(null)
    },
  )
}
