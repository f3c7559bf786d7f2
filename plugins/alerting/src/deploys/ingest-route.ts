import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { isUuid } from '@svc/auth'
import { publish } from '@svc/events'
import { NotFoundError } from '@svc/http'
import { deliveryIdOf } from '../ingestion/delivery-id.js'
import { SIGNATURE_HEADER, verifySignature } from '../ingestion/signature.js'
import { findDeployIngestConfig, insertDeployEvent } from '../queries/deploy-events.js'
import { hashApiKey } from '../webhooks/secrets.js'
import { DeployEvent, deployBody } from './schemas.js'
import { readDeploy, type DeployInput, type DeployKind } from './read.js'

/**
 * Records a deploy once per delivery id, and announces it (`deploy.recorded`) in the same
 * transaction, so workflows on it see every deploy exactly once.
 */
export async function recordDeploy(
  app: FastifyInstance,
  organizationId: string,
  configId: string,
  deploy: DeployInput,
  deliveryId: string | undefined,
) {
  return app.database.db.transaction().execute(async (trx) => {
    const recorded = await insertDeployEvent(trx, organizationId, configId, deploy, deliveryId ?? null)
    if (!recorded.repeated)
      await publish(app.jobs, trx, 'deploy.recorded', {
        organizationId,
        deployEventId: recorded.row.id,
        service: recorded.row.service,
        kind: recorded.row.kind as DeployKind,
      })
    return recorded
  })
}

/**
 * `POST /api/v1/organizations/:orgId/deploy-events/ingest/:apiKey`: a deploy pipeline reports a
 * deploy with the key of a webhook config of that organization (a key of another organization is
 * the same 404 as an unknown one), signed like any ingested body when the config has a secret.
 */
export function registerDeployIngestRoute(app: FastifyInstance): void {
  const db = app.database.db
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/api/v1/organizations/:orgId/deploy-events/ingest/:apiKey',
    {
      config: { public: true },
      schema: {
        tags: ['deploy events'],
        summary: 'Ingest a deploy event (public, authenticated by a webhook config’s API key in the path)',
        description:
          'A generic `{service, kind (deploy, config or rollback), environment, version, commit, repository, url, status, startedAt, finishedAt}` or a GitHub `deployment_status` payload. Times more than 5 minutes in the future are 400. A delivery id (`x-delivery-id`, `webhook-id` or `x-github-delivery`) seen before answers 200 with the event it recorded, and records nothing.',
        params: Type.Object({ orgId: Type.String(), apiKey: Type.String() }),
        body: Type.Object({}, { additionalProperties: true }),
        response: { 200: DeployEvent, 201: DeployEvent },
      },
    },
    async (request, reply) => {
      const { orgId, apiKey } = request.params
      const config = isUuid(orgId) ? await findDeployIngestConfig(db, orgId, hashApiKey(apiKey)) : undefined
      if (!config) throw new NotFoundError('webhook')
      verifySignature(request.headers[SIGNATURE_HEADER], config.signingSecret, request.rawBody ?? Buffer.alloc(0))
      const { row, repeated } = await recordDeploy(app, orgId, config.id, readDeploy(request.body), deliveryIdOf(request))
      return reply.code(repeated ? 200 : 201).send(deployBody(row))
    },
  )
}
