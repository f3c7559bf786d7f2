// The servers `pnpm bench` measures, in a process of their own so the load generator does
// not share their event loop: a bare Fastify hello-world, a minimal route that verifies the
// token and reads one row (the baseline of /users/me), and the platform and product APIs on
// one in-memory embedded database trusting a loopback issuer, with an organization of 25
// alerts to list. Prints one JSON line when ready. With TEST_DATABASE_URL set, the APIs run on a
// database of their own on that PostgreSQL server (dropped at exit) instead.
import { createPublicKey, type JsonWebKey } from 'node:crypto'
import fastifyJwt from '@fastify/jwt'
import Fastify from 'fastify'
import { buildApp } from '@svc/platform'
import { buildApp as buildProduct } from '@svc/product'
import { openResources } from '@svc/runtime'
import { createTestDatabase, startTestIssuer, testConfig } from '@svc/testkit'

const teardowns: Array<() => unknown> = []
const context = { teardown: (fn: () => unknown) => teardowns.push(fn) }

const bare = Fastify()
bare.get('/hello', async () => ({ hello: 'world' }))
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' })
// The same hello-world again: its ratio to `bare` shows how far this run's ratios wander on code
// that is the same.
const control = Fastify()
control.get('/hello', async () => ({ hello: 'world' }))
const controlAddress = await control.listen({ port: 0, host: '127.0.0.1' })
// The hello-world once more, spending a fixed YARDSTICK_MICROSECONDS of CPU on each request: the
// ratio any route doing that much more work than bare could reach on this machine.
const YARDSTICK_MICROSECONDS = 10
const yardstick = Fastify()
yardstick.get('/hello', async () => {
  const until = performance.now() + YARDSTICK_MICROSECONDS / 1000
  while (performance.now() < until);
  return { hello: 'world' }
})
const yardstickAddress = await yardstick.listen({ port: 0, host: '127.0.0.1' })

const issuer = await startTestIssuer(context)
// Production settings but a rate limit that a single load generator cannot reach.
const databaseUrl = await createTestDatabase(context)
const config = testConfig(issuer, { databaseUrl, logLevel: 'warn', rateLimit: { max: 1_000_000_000, timeWindow: '1 minute' } })
const resources = await openResources(config, { inMemory: databaseUrl === undefined })
const platform = await buildApp(config, resources)
const platformAddress = await platform.listen({ port: 0, host: '127.0.0.1' })
const product = await buildProduct(config, resources)
const productAddress = await product.listen({ port: 0, host: '127.0.0.1' })

// An organization with alerts, made through the APIs as a user would.
const token = issuer.idp.mintIdToken({ email: 'bench@example.com', groups: ['Engineers'] })
const authorization = `Bearer ${token}`
const organization = await platform.inject({
  method: 'POST',
  url: '/api/v1/organizations',
  headers: { authorization },
  payload: { name: 'Bench', slug: 'bench' },
})
const orgId = (organization.json() as { id: string }).id
const source = await product.inject({
  method: 'POST',
  url: `/api/v1/organizations/${orgId}/webhooks`,
  headers: { authorization },
  payload: { name: 'Bench' },
})
const { ingestPath } = source.json() as { ingestPath: string }
for (let index = 0; index < 25; index += 1) {
  await product.inject({
    method: 'POST',
    url: ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title: `Alert ${index}`, service: `service-${index % 5}`, priority: 'P3' }),
  })
}

// The least a route answering who the caller is must do (issue 57's baseline for /users/me):
// verify the same RS256 ID token with @fastify/jwt (issuer, audience, expiry) against the issuer's
// key, and read the caller's row by primary key from the same database.
const { userId } = (await platform.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization } })).json() as {
  userId: string
}
const { keys } = (await (await fetch(config.auth.jwksUrl)).json()) as { keys: JsonWebKey[] }
const minimal = Fastify()
await minimal.register(fastifyJwt, {
  secret: { public: createPublicKey({ key: keys[0]!, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString() },
  // fast-jwt's cache of verified tokens, as a route serving the same token again would keep: the
  // platform keeps its verified sessions too, so neither pays an RSA verification per request.
  verify: { algorithms: ['RS256'], allowedIss: config.auth.issuer, allowedAud: config.auth.clientIds, cache: true },
})
minimal.get('/me', async (request) => {
  await request.jwtVerify()
  return resources.database.db.selectFrom('core.users').select(['id', 'email', 'name']).where('id', '=', userId).executeTakeFirstOrThrow()
})
const minimalAddress = await minimal.listen({ port: 0, host: '127.0.0.1' })

console.log(
  JSON.stringify({
    bare: `${bareAddress}/hello`,
    control: `${controlAddress}/hello`,
    yardstick: `${yardstickAddress}/hello`,
    yardstickMicroseconds: YARDSTICK_MICROSECONDS,
    platform: `${platformAddress}/api/v1/users/me`,
    minimal: `${minimalAddress}/me`,
    list: `${productAddress}/api/v1/organizations/${orgId}/alerts?limit=20`,
    token,
  }),
)

process.once('SIGTERM', async () => {
  await Promise.all([bare.close(), control.close(), yardstick.close(), minimal.close(), platform.close(), product.close()])
  await resources.close()
  for (const teardown of teardowns) await teardown()
  process.exit(0)
})
