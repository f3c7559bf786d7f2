import { randomBytes } from 'node:crypto'
import net from 'node:net'
import t from 'tap'
import { buildApp } from '@svc/platform'
import { openResources } from '@svc/runtime'
import { createTestDatabase, startTestIssuer, testConfig, testServerUrl } from '@svc/testkit'

// Two replicas of the platform API on one PostgreSQL database and one Redis (REDIS_URL): what
// one counts or invalidates, the other sees. Replicas are a PostgreSQL deployment (PGlite is
// one process), so this runs in the PostgreSQL pass, which CI requires.
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

const redisAnswers = await new Promise<boolean>((resolve) => {
  const { hostname, port } = new URL(REDIS_URL)
  const socket = net.connect({ host: hostname, port: Number(port || 6379), timeout: 1_000 })
  const answer = (answered: boolean) => {
    socket.destroy()
    resolve(answered)
  }
  socket.once('connect', () => answer(true))
  socket.once('error', () => answer(false))
  socket.once('timeout', () => answer(false))
})

if (!testServerUrl()) {
  t.pass('replicas share PostgreSQL and Redis: checked in the PostgreSQL pass')
  process.exit(0)
}
if (!redisAnswers) {
  if (process.env.CI === 'true') throw new Error(`CI=true and no Redis answers at ${REDIS_URL}: the replica tests are required in CI`)
  t.pass(`no Redis answers at ${REDIS_URL}: the tests of REDIS_URL were skipped`)
  process.exit(0)
}

const issuer = await startTestIssuer(t)
const config = testConfig(issuer, {
  databaseUrl: await createTestDatabase(t),
  redisUrl: REDIS_URL,
  rateLimit: { max: 5, timeWindow: '1 minute' },
})
// A namespace of this run's own: another run on the same Redis keeps its own counters.
const redisNamespace = `test-${randomBytes(6).toString('hex')}:`

async function replica() {
  const resources = await openResources(config, { inMemory: true, redisNamespace })
  t.teardown(() => resources.close())
  const app = await buildApp(config, resources)
  t.teardown(() => app.close())
  await app.ready()
  return app
}
const [first, second] = [await replica(), await replica()]

t.test('the rate limit counts requests on every replica against one budget', async (t) => {
  // The same client address on both replicas: 5 a minute in all, not 5 each.
  const statuses: number[] = []
  for (const app of [first, second, first, second, first, second, first]) {
    statuses.push((await app.inject({ method: 'GET', url: '/api/v1/users/me' })).statusCode)
  }
  t.same(statuses, [401, 401, 401, 401, 401, 429, 429], 'the sixth request, on either replica, is refused')
})

t.test('a profile change on one replica is seen at once by the other (session invalidation)', async (t) => {
  // A fresh budget: other addresses than the test above (inject's remoteAddress).
  const headers = { authorization: `Bearer ${issuer.idp.mintIdToken({ email: 'replicas@example.com', groups: [] })}` }
  const on = (app: typeof first) => (options: { method: 'GET' | 'PATCH'; url: string; payload?: object }) =>
    app.inject({ ...options, headers, remoteAddress: '192.0.2.10' })
  const before = await on(second)({ method: 'GET', url: '/api/v1/users/me' })
  t.equal(before.statusCode, 200)
  t.equal(before.json().displayName ?? null, null, 'cached on the second replica with no display name')

  const changed = await on(first)({ method: 'PATCH', url: '/api/v1/users/me', payload: { displayName: 'Ada on replica one' } })
  t.equal(changed.statusCode, 200)

  // The invalidation travels by pub/sub: within moments, far inside the 30 s the cache keeps an account.
  let seen: string | null = null
  for (let attempt = 0; attempt < 40 && seen === null; attempt += 1) {
    seen = (await on(second)({ method: 'GET', url: '/api/v1/users/me' })).json().displayName ?? null
    if (seen === null) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal(seen, 'Ada on replica one')
})
