import Fastify from 'fastify'
import t from 'tap'
import { registerErrorHandling } from '@svc/http'
import { keyGuesses } from '../src/intake/limits.js'

// PagerDuty's routing key is in the body, so its per-config limit runs once the body is read; an
// address that has been guessing keys is refused before its next body is read (issue 51).

t.test('an address past its unknown keys is refused before its body is parsed; others are not', async (t) => {
  const guesses = keyGuesses({ perConfig: 100, perAddress: 3 })
  const app = Fastify()
  registerErrorHandling(app)
  let parsed = 0
  app.addHook('preParsing', async (_request, _reply, payload) => {
    parsed += 1
    return payload
  })
  app.post('/v2/enqueue', { onRequest: guesses.beforeBody }, async () => ({ status: 'success' }))
  t.teardown(() => app.close())
  const send = (remoteAddress: string) =>
    app.inject({ method: 'POST', url: '/v2/enqueue', remoteAddress, headers: { 'content-type': 'application/json' }, payload: '{"x":' })

  for (let guess = 0; guess < 3; guess++) {
    t.equal((await send('198.51.100.9')).statusCode, 400, 'a malformed body is read and refused')
    guesses.record('198.51.100.9')
  }
  const before = parsed
  const refused = await send('198.51.100.9')
  t.equal(refused.statusCode, 429)
  t.equal(parsed, before, 'its body was not parsed')
  t.equal((await send('198.51.100.10')).statusCode, 400, 'another address is read as before')

  const later = keyGuesses({ perConfig: 100, perAddress: 1 }, 60_000)
  later.record('203.0.113.1', Date.now() - 61_000)
  const lateApp = Fastify()
  lateApp.post('/', { onRequest: later.beforeBody }, async () => 'ok')
  t.teardown(() => lateApp.close())
  t.equal((await lateApp.inject({ method: 'POST', url: '/', remoteAddress: '203.0.113.1' })).statusCode, 200, 'a window past is forgotten')
})
