import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { isUuid } from '@svc/auth'
import { publish } from '@svc/events'
import { NotFoundError, UnauthorizedError } from '@svc/http'
import { deliveryIdOf } from '../delivery-id.js'
import { credentialsOf } from '../credentials.js'
import { verifyDelivery } from '../signature.js'
import { findDeployIngestConfig, insertDeployEvent } from './queries.js'
import { hashApiKey } from '../configs/secrets.js'
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

const DEPLOY_INGEST_PATH = '/api/v1/organizations/:orgId/deploy-events/ingest'
const proofs =
  'The secret, when the config has one, is proven as for alert ingestion (decision 0026): `x-webhook-signature` over the exact body, or the secret itself as a credential. A GitHub `deployment_status` payload, or a generic `{service, kind (deploy, config or rollback), environment, version, commit, repository, url, status, startedAt, finishedAt}`. Times more than 5 minutes in the future are 400. A delivery id (`x-delivery-id`, `webhook-id` or `x-github-delivery`) seen before answers 200 with the event it recorded, and records nothing.'

/**
 * A deploy pipeline reports a deploy with the key of a webhook config of that organization (a key
 * of another organization is the same 404 as an unknown one). The key and the proof of the
 * config's secret are read as for alert ingestion (decision 0026): the key in the path, or as the
 * Basic user name or Bearer token so it stays out of CI logs that print URLs; the secret proven
 * by `x-webhook-signature`, or presented as the Bearer token at the keyed path or the Basic password.
 */
export function registerDeployIngestRoute(app: FastifyInstance): void {
  const db = app.database.db
  const typed = app.withTypeProvider<TypeBoxTypeProvider>()
  const Params = Type.Object({ orgId: Type.String() })

  async function ingest(request: FastifyRequest<{ Params: { orgId: string } }>, reply: FastifyReply) {
    const { orgId } = request.params
    const { apiKey, proof } = credentialsOf(request)
    if (!apiKey) throw new UnauthorizedError('send the API key: in the path, as the Basic user name, or as Authorization: Bearer')
    const config = isUuid(orgId) ? await findDeployIngestConfig(db, orgId, hashApiKey(apiKey)) : undefined
    if (!config) throw new NotFoundError('webhook')
    verifyDelivery(proof, config.signingSecret, request.rawBody ?? Buffer.alloc(0))
    const { row, repeated } = await recordDeploy(app, orgId, config.id, readDeploy(request.body), deliveryIdOf(request))
    return reply.code(repeated ? 200 : 201).send(deployBody(row))
  }

  typed.post(
    `${DEPLOY_INGEST_PATH}/:apiKey`,
    {
      config: { public: true },
      schema: {
        tags: ['deploy events'],
        summary: 'Ingest a deploy event (public, authenticated by a webhook config’s API key in the path)',
        description: `${proofs} Here an \`Authorization\` credential (Bearer, or the Basic password) is the secret.`,
        params: Type.Object({ ...Params.properties, apiKey: Type.String({ description: 'The config’s API key (whk_…)' }) }),
        body: Type.Object({}, { additionalProperties: true }),
        response: { 200: DeployEvent, 201: DeployEvent },
      },
    },
    ingest,
  )

  typed.post(
    DEPLOY_INGEST_PATH,
    {
      config: { public: true },
      schema: {
        tags: ['deploy events'],
        summary: 'Ingest a deploy event (public, authenticated by a webhook config’s API key in the Authorization header)',
        description: `The API key is the Basic user name (the password being the secret, when the config has one) or the Bearer token (for a config without a secret), so it need not be in a URL. ${proofs}`,
        params: Params,
        body: Type.Object({}, { additionalProperties: true }),
        response: { 200: DeployEvent, 201: DeployEvent },
      },
    },
    ingest,
  )
}
