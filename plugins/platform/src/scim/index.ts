import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SCIM_BASE_PATH } from '@svc/auth'
import { toErrorBody } from '@svc/http'
import { scimDiscoveryRoutes } from './discovery.js'
import { ScimError, scimErrorBody, type ScimType } from './errors.js'
import { scimGroupRoutes } from './groups/routes.js'
import { scimUserRoutes } from './users/routes.js'

const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8'

/** Any error as a SCIM error: the API's own mapping decides the status, SCIM the shape. */
function asScimError(error: FastifyError, request: FastifyRequest): ScimError {
  if (error instanceof ScimError) return error
  const body = toErrorBody(error, request)
  const details = body.details?.map((detail) => `${detail.field} ${detail.message}`).join('; ')
  const scimType: ScimType | undefined =
    body.statusCode === 409
      ? 'uniqueness'
      : error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
        ? 'invalidSyntax'
        : body.code === 'VALIDATION_FAILED'
          ? 'invalidValue'
          : undefined
  return new ScimError(body.statusCode, details ? `${body.message}: ${details}` : body.message, scimType)
}

/** A router error on a SCIM path (a 1 KB id is 414 before any route runs), in SCIM's shape. */
export function scimRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): boolean {
  if (!request.url.toLowerCase().startsWith(SCIM_BASE_PATH.toLowerCase())) return false
  const body = toErrorBody(error, request)
  const detail = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'an id is longer than 100 characters' : 'the URL is not valid'
  reply
    .code(body.statusCode)
    .header('content-type', SCIM_CONTENT_TYPE)
    .send(scimErrorBody(new ScimError(body.statusCode, detail)))
  return true
}

/**
 * The SCIM 2.0 service provider (RFC 7643, RFC 7644), registered under SCIM_BASE_PATH. Every
 * route takes the SCIM token rule (`config: { scim: true }`); answers, errors included, are
 * `application/scim+json`; requests may be `application/scim+json` or `application/json`.
 */
export async function scimSurface(app: FastifyInstance): Promise<void> {
  // Providers send a JSON content type on bodiless DELETEs too: an empty body is no body.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  const parseScimJson: typeof parseJson = (request, body, done) =>
    body.length === 0 ? done(null, undefined) : parseJson(request, body, done)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser(['application/json', 'application/scim+json'], { parseAs: 'string' }, parseScimJson)
  app.addHook('onSend', async (_request, reply: FastifyReply, payload) => {
    if (reply.statusCode !== 204) reply.header('content-type', SCIM_CONTENT_TYPE)
    return payload
  })
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const scimError = asScimError(error, request)
    return reply.code(scimError.statusCode).send(scimErrorBody(scimError))
  })
  app.setNotFoundHandler((request, reply) => {
    const error = new ScimError(404, `no SCIM endpoint ${request.method} ${request.url.split('?')[0]}`)
    return reply.code(404).send(scimErrorBody(error))
  })
  await app.register(scimDiscoveryRoutes)
  await app.register(scimUserRoutes)
  await app.register(scimGroupRoutes)
}
