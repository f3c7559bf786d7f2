import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import pino from 'pino'
import t from 'tap'
import { buildApp } from '@svc/platform'
import { openResources } from '@svc/runtime'
import { createTestDatabase, freePort, startTestIssuer, testConfig, testServerUrl, until } from '@svc/testkit'

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

t.test('a Redis that is not there at start: the service starts, counts nothing, and shares its counters once Redis appears', async (t) => {
  const port = await freePort()
  const lines: string[] = []
  const late = testConfig(issuer, {
    databaseUrl: config.databaseUrl,
    redisUrl: `redis://127.0.0.1:${port}`,
    rateLimit: { max: 2, timeWindow: '1 minute' },
  })
  const resources = await openResources(late, {
    inMemory: true,
    redisNamespace: `test-late-${randomBytes(6).toString('hex')}:`,
    log: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
  })
  t.teardown(() => resources.close())
  const app = await buildApp(late, resources)
  t.teardown(() => app.close())
  await app.ready()
  t.match(lines.join(''), /Redis is unreachable/, 'it says so once')
  const statuses = async (n: number) => {
    const seen: number[] = []
    for (let i = 0; i < n; i++) seen.push((await app.inject({ method: 'GET', url: '/api/v1/users/me' })).statusCode)
    return seen
  }
  t.same(await statuses(4), [401, 401, 401, 401], 'without Redis, requests go through uncounted')

  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  })
  t.teardown(() => void redis.kill())
  await until('the service to reach Redis', () => (resources.shared?.redis.status === 'ready' ? true : undefined), 20_000)
  t.same(await statuses(3), [401, 401, 429], 'the limit holds again, counted in Redis')
})
