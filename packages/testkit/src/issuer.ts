import type { FastifyInstance } from 'fastify'
import { buildDevIdentityProviderServer, createDevIdentityProvider, type DevIdentityProvider } from '@svc/dev-idp'
import { freePort } from './ports.js'
import { nextSigningKey } from './signing-keys.js'
import type { TestContext } from './teardown.js'

export interface TestIssuer {
  idp: DevIdentityProvider
  server: FastifyInstance
  issuer: string
  jwksUrl: string
  tokenUrl: string
  clientId: string
  /** How many times the JWKS was fetched. */
  jwksRequests(): number
  /** Authorization headers the token endpoint received. */
  tokenRequestAuthorizations: Array<string | undefined>
}

/** An RS256 issuer with a key of its own (no other issuer of the process has it), serving its JWKS and token endpoint on loopback. */
export async function startTestIssuer(
  t: TestContext,
  options: { clientId?: string; clientSecret?: string; path?: string } = {},
): Promise<TestIssuer> {
  const clientId = options.clientId ?? 'test-client'
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}${options.path ?? '/pool'}`
  const idp = createDevIdentityProvider({ issuer, clientId, key: await nextSigningKey(), clientSecret: options.clientSecret })
  const server = await buildDevIdentityProviderServer(idp)
  let jwksRequests = 0
  const tokenRequestAuthorizations: Array<string | undefined> = []
  server.addHook('onRequest', async (request) => {
    if (request.url.endsWith('/.well-known/jwks.json')) jwksRequests += 1
    if (request.url.endsWith('/oauth2/token')) tokenRequestAuthorizations.push(request.headers.authorization)
  })
  await server.listen({ port, host: '127.0.0.1' })
  t.teardown(() => server.close())
  return {
    idp,
    server,
    issuer,
    jwksUrl: `${issuer}/.well-known/jwks.json`,
    tokenUrl: `${issuer}/oauth2/token`,
    clientId,
    jwksRequests: () => jwksRequests,
    tokenRequestAuthorizations,
  }
}
