import { createServer } from 'node:http'
import { generateKeyPairSync } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { createTestDatabase, signRs256, startTestIssuer, testConfig } from '@svc/testkit'

// Not our development identity provider: a bare JWKS endpoint at a path of its own, with
// keys that carry no `alg`, an EC key beside the RSA ones, and a key that appears later
// (rotation). Only the configuration table connects the service to it.
function rsaKey(kid: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return {
    kid,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' },
  }
}
const current = rsaKey('2026-11')
const next = rsaKey('2026-12')
const ec = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }), kid: 'ec-key', use: 'sig' }
let published = [ec, current.jwk]
let jwksRequests = 0
const jwksServer = createServer((request, response) => {
  if (request.url !== '/tenant-42/keys') return void response.writeHead(404).end()
  jwksRequests += 1
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }))
})
await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise((resolve) => jwksServer.close(resolve)))
const origin = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`

const ISSUER = 'https://login.example.org/tenant-42/v2.0'
const placeholder = await startTestIssuer(t)
const config = testConfig(placeholder, {
  databaseUrl: await createTestDatabase(t),
  auth: {
    issuer: ISSUER,
    jwksUrl: `${origin}/tenant-42/keys`,
    clientIds: ['web-app', 'mobile-app'],
    tokenUrl: `${origin}/token`,
    groupsClaim: 'roles',
  },
})
const resources = await openResources(config, { inMemory: true })
const app = await buildApp(config, resources)
t.teardown(async () => {
  await app.close()
  await resources.close()
})

function token(key: { kid: string; privateKeyPem: string }, claims: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000)
  return signRs256(
    key.privateKeyPem,
    { kid: key.kid },
    {
      sub: 'user-1',
      email: 'someone@example.org',
      iss: ISSUER,
      aud: 'mobile-app',
      iat: now,
      exp: now + 600,
      roles: ['PlatformAdmins'],
      ...claims,
    },
  )
}
const me = (idToken: string) => app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${idToken}` } })

t.test('its ID tokens are accepted through the configuration table alone', async (t) => {
  const response = await me(token(current))
  t.equal(response.statusCode, 200)
  t.match(response.json(), { email: 'someone@example.org', groups: ['PlatformAdmins'], isPlatformAdmin: true })
  t.equal(jwksRequests, 1)
  t.equal((await me(token(current, { aud: 'web-app' }))).statusCode, 200, 'any of the listed client ids')
  t.equal(jwksRequests, 1, 'the key is cached')
})

t.test('a token naming the EC key in an RS256 header is refused', async (t) => {
  t.equal((await me(token({ kid: 'ec-key', privateKeyPem: current.privateKeyPem }))).statusCode, 401)
})

t.test('a rotated-in key is fetched when a token first names it', async (t) => {
  t.equal((await me(token({ ...next, kid: 'never-published' }))).statusCode, 401, 'a key the issuer does not publish')
  published = [ec, current.jwk, next.jwk]
  t.equal((await me(token(next, { sub: 'user-2', email: 'other@example.org' }))).statusCode, 200)
})

t.test('without token_use the claim check is skipped; with another value the token is refused', async (t) => {
  t.equal((await me(token(current, { token_use: 'access' }))).statusCode, 401)
  t.equal((await me(token(current, { token_use: 'id' }))).statusCode, 200)
})
