import { createHash, randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { NotFoundError, invalidField } from '@svc/http'
import { deleteRelay, findRelay, insertRelay, listRelays, updateRelay, type RelayRow } from '../queries/relays.js'
import { MANAGED_BASE, OrgParams, Region, Relay, RelayParams, relayBody, tags } from '../schemas.js'
import { auditEntry } from '../checks/access.js'

export const hashRelayKey = (key: string) => createHash('sha256').update(key).digest('hex')

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  regions: Type.Array(Region, { minItems: 1, maxItems: 20, uniqueItems: true, description: 'The regions this relay runs checks for' }),
  heartbeatSeconds: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 300, description: 'How often it reports; 3 missed: unhealthy. Default 10' }),
  ),
}

const audited = (row: RelayRow) => ({ name: row.name, regions: row.regions })

/**
 * Relays: private locations that run the checks of their regions (synthetics manager to change,
 * viewer to read). The key is shown once, when the relay is created; only its hash is kept.
 */
export const relayRoutes: FastifyPluginAsyncTypebox<{ serviceRegion: string }> = async (app, options) => {
  const db = app.database.db
  const viewer = app.requireProductRole('synthetics', 'viewer')
  const manager = app.requireProductRole('synthetics', 'manager')
  const relayOf = async (organizationId: string, relayId: string) => {
    const relay = isUuid(relayId) ? await findRelay(db, organizationId, relayId) : undefined
    if (!relay) throw new NotFoundError('relay')
    return relay
  }
  const notOwnRegion = (regions: readonly string[]) => {
    const index = regions.indexOf(options.serviceRegion)
    if (index >= 0) throw invalidField(`regions/${index}`, `${options.serviceRegion} is the service's own region`)
  }

  app.get(
    `${MANAGED_BASE}/relays`,
    {
      schema: {
        tags,
        summary: 'List relays with their health (synthetics viewer)',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(Relay) }) },
      },
      onRequest: viewer,
    },
    async (request) => ({ data: (await listRelays(db, membershipOf(request).organizationId)).map((row) => relayBody(row)) }),
  )

  app.get(
    `${MANAGED_BASE}/relays/:relayId`,
    { schema: { tags, summary: 'A relay (synthetics viewer)', params: RelayParams, response: { 200: Relay } }, onRequest: viewer },
    async (request) => relayBody(await relayOf(membershipOf(request).organizationId, request.params.relayId)),
  )

  app.post(
    `${MANAGED_BASE}/relays`,
    {
      schema: {
        tags,
        summary: 'Create a relay; its key is in the answer, once (synthetics manager)',
        params: OrgParams,
        body: Type.Object(fields, { additionalProperties: false }),
        response: { 201: Relay },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      notOwnRegion(request.body.regions)
      const key = `rly_${randomBytes(32).toString('base64url')}`
      const row = await db.transaction().execute(async (trx) => {
        const row = await insertRelay(trx, organizationId, {
          name: request.body.name.trim(),
          regions: request.body.regions,
          heartbeatSeconds: request.body.heartbeatSeconds ?? 10,
          keyHash: hashRelayKey(key),
          createdBy: request.user.userId,
        })
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'relay', row.id),
          action: 'relay.created',
          after: audited(row),
        })
        return row
      })
      return reply.code(201).send(relayBody(row, key))
    },
  )

  app.patch(
    `${MANAGED_BASE}/relays/:relayId`,
    {
      schema: {
        tags,
        summary: 'Change a relay’s name, regions or heartbeat (synthetics manager)',
        params: RelayParams,
        body: Type.Object(
          { name: Type.Optional(fields.name), regions: Type.Optional(fields.regions), heartbeatSeconds: fields.heartbeatSeconds },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Relay },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      if (request.body.regions) notOwnRegion(request.body.regions)
      const before = await relayOf(organizationId, request.params.relayId)
      const row = await db.transaction().execute(async (trx) => {
        const row = (await updateRelay(trx, organizationId, before.id, { ...request.body, name: request.body.name?.trim() }))!
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'relay', row.id),
          action: 'relay.updated',
          before: audited(before),
          after: audited(row),
        })
        return row
      })
      return relayBody(row)
    },
  )

  app.delete(
    `${MANAGED_BASE}/relays/:relayId`,
    {
      schema: {
        tags,
        summary: 'Delete a relay; its key stops working (synthetics manager)',
        params: RelayParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const relay = await relayOf(organizationId, request.params.relayId)
      await db.transaction().execute(async (trx) => {
        await deleteRelay(trx, organizationId, relay.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'relay', relay.id),
          action: 'relay.deleted',
          before: audited(relay),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
