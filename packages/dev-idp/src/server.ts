import formbody from '@fastify/formbody'
import Fastify, { type FastifyInstance } from 'fastify'
import type { DevIdentityProvider } from './identity-provider.js'

interface TokenRequest {
  grant_type?: string
  refresh_token?: string
  client_id?: string
}

interface RevokeRequest {
  token?: string
  client_id?: string
}

function presentsClientSecret(authorization: string | undefined, clientId: string, clientSecret: string): boolean {
  const match = /^Basic (.+)$/i.exec(authorization ?? '')
  if (!match?.[1]) return false
  const expected = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`
  return Buffer.from(match[1], 'base64').toString() === expected
}

/**
 * The provider's HTTP face: OIDC discovery, JWKS and the token endpoint (refresh grant),
 * at the paths a Cognito user pool uses, relative to the issuer URL.
 */
export async function buildDevIdentityProviderServer(idp: DevIdentityProvider, logger = false): Promise<FastifyInstance> {
  const app = Fastify({ logger })
  await app.register(formbody)
  const base = new URL(idp.issuer).pathname.replace(/(?<!\/)\/+$/, '')

  app.get(`${base}/.well-known/openid-configuration`, async () => ({
    issuer: idp.issuer,
    jwks_uri: `${idp.issuer}/.well-known/jwks.json`,
    token_endpoint: `${idp.issuer}/oauth2/token`,
    revocation_endpoint: `${idp.issuer}/oauth2/revoke`,
    authorization_endpoint: `${idp.issuer}/oauth2/authorize`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    grant_types_supported: ['refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
  }))

  app.get(`${base}/.well-known/jwks.json`, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300')
    return idp.jwks()
  })

  app.post<{ Body: TokenRequest }>(`${base}/oauth2/token`, async (request, reply) => {
    const body = request.body ?? {}
    if (body.grant_type !== 'refresh_token') {
      return reply.code(400).send({ error: 'unsupported_grant_type' })
    }
    if (idp.clientSecret !== undefined && !presentsClientSecret(request.headers.authorization, idp.clientId, idp.clientSecret)) {
      return reply.code(401).send({ error: 'invalid_client' })
    }
    const subject = body.refresh_token ? idp.redeemRefreshToken(body.refresh_token) : undefined
    if (!subject) return reply.code(400).send({ error: 'invalid_grant', error_description: 'Invalid Refresh Token' })
    return { id_token: idp.mintIdToken(subject), token_type: 'Bearer', expires_in: 3600 }
  })

  // Cognito's /oauth2/revoke (RFC 7009): the refresh token stops working; 200 whatever it was.
  app.post<{ Body: RevokeRequest }>(`${base}/oauth2/revoke`, async (request, reply) => {
    const body = request.body ?? {}
    if (idp.clientSecret !== undefined && !presentsClientSecret(request.headers.authorization, idp.clientId, idp.clientSecret)) {
      return reply.code(401).send({ error: 'invalid_client' })
    }
    if (!body.token) return reply.code(400).send({ error: 'invalid_request' })
    idp.revokeRefreshToken(body.token)
    return reply.code(200).send('')
  })

  return app
}
