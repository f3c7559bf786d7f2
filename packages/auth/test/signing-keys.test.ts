import { generateKeyPairSync } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { createSigningKeyResolver } from '../src/signing-keys.js'

// The key-set cache against a JWKS served on loopback, with a clock the test moves.

function rsaJwk(kid: string) {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }
}

const published = { keys: [rsaJwk('real-1')] }
let requests = 0
let failing = false
const server = createServer((_request, response) => {
  requests += 1
  if (failing) {
    response.writeHead(503).end()
    return
  }
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(published))
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`

function resolverAt(start: number) {
  const clock = { now: start }
  const keys = createSigningKeyResolver({ jwksUrl, now: () => clock.now })
  const resolve = (kid: string) => keys.resolve({ alg: 'RS256', kid })
  return { clock, keys, resolve }
}
const MINUTE = 60_000

/** The status of the error a resolution is refused with, or undefined when it resolves. */
async function statusOf(attempt: Promise<unknown>): Promise<number | undefined> {
  try {
    await attempt
    return undefined
  } catch (error) {
    return (error as { statusCode?: number }).statusCode
  }
}

t.test('a forged-kid storm cannot lock out the real key when its entry ages', async (t) => {
  const { clock, keys, resolve } = resolverAt(1_000_000)
  const afterFirst = requests
  t.match(await resolve('real-1'), /BEGIN PUBLIC KEY/)

  for (let index = 0; index < 20; index += 1) t.equal(await statusOf(resolve(`forged-${index}`)), 401)
  t.equal(requests - afterFirst, 5, 'unknown kids (the first sight of the real one included) spend at most 5 fetches a minute')
  t.equal(await statusOf(resolve('forged-0')), 401)
  t.equal(requests - afterFirst, 5, 'a kid found unknown is refused without a fetch')

  clock.now += 30_000
  const beforeKnown = requests
  t.match(await resolve('real-1'), /BEGIN PUBLIC KEY/, 'with the budget spent, the known key still answers')
  t.equal(requests, beforeKnown, 'from memory')

  // Eleven minutes on, the set is past its 10-minute life, and a new storm spends this
  // minute's budget on fetches that fail (so they refresh nothing).
  clock.now += 11 * MINUTE
  failing = true
  for (let index = 20; index < 30; index += 1) t.equal(await statusOf(resolve(`forged-${index}`)), 401)
  failing = false
  clock.now += 31_000
  const beforeReal = requests
  t.match(await resolve('real-1'), /BEGIN PUBLIC KEY/, 'the stale key serves at once, budget or not')
  await keys.settled()
  t.equal(requests - beforeReal, 1, 'and one refresh ran in the background, outside the budget')
  t.match(await resolve('real-1'), /BEGIN PUBLIC KEY/)
  await keys.settled()
  t.equal(requests - beforeReal, 1, 'fresh again: no further fetch')
})

t.test('the key set is refreshed before it expires, so a rotated key is known without spending the budget', async (t) => {
  const { clock, keys, resolve } = resolverAt(5_000_000)
  await resolve('real-1')
  published.keys.push(rsaJwk('rotated-2'))
  clock.now += 9 * MINUTE
  await resolve('real-1')
  await keys.settled()
  for (let index = 0; index < 5; index += 1) t.equal(await statusOf(resolve(`storm-${index}`)), 401)
  t.match(await resolve('rotated-2'), /BEGIN PUBLIC KEY/, 'fetched with the background refresh')
})

t.test('while the identity provider fails, the stale set keeps serving and is retried, not hammered', async (t) => {
  const { clock, keys, resolve } = resolverAt(9_000_000)
  await resolve('real-1')
  failing = true
  t.teardown(() => {
    failing = false
  })
  clock.now += 12 * MINUTE
  const before = requests
  for (let index = 0; index < 10; index += 1) {
    t.match(await resolve('real-1'), /BEGIN PUBLIC KEY/)
    await keys.settled()
  }
  t.equal(requests - before, 1, 'one failed refresh; the next waits 30 s')
  clock.now += 31_000
  await resolve('real-1')
  await keys.settled()
  t.equal(requests - before, 2)
  clock.now += 24 * 60 * MINUTE
  t.equal(await statusOf(resolve('real-1')), 401, 'a day-old set is not served')
})

t.test('tokens without RS256 or without a kid are refused before any fetch', async (t) => {
  const { keys } = resolverAt(0)
  t.equal(await statusOf(keys.resolve({ alg: 'HS256', kid: 'real-1' })), 401)
  t.equal(await statusOf(keys.resolve({ alg: 'RS256' })), 401)
  t.equal(keys.fetchesMade, 0)
})

t.test('a kid found unknown is looked for again a minute later', async (t) => {
  const { clock, resolve } = resolverAt(20_000_000)
  await resolve('real-1')
  t.equal(await statusOf(resolve('late-3')), 401)
  published.keys.push(rsaJwk('late-3'))
  const before = requests
  t.equal(await statusOf(resolve('late-3')), 401, 'still refused at once')
  t.equal(requests, before, 'without a fetch')
  clock.now += 61_000
  t.match(await resolve('late-3'), /BEGIN PUBLIC KEY/, 'a minute on, fetched and found')
})
