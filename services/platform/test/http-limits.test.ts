import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'

// What a client may hold of the service (issue 51): its headers and its whole request are bounded
// in time, and a body declared larger than the route takes is refused before it is read. Real
// sockets, with the timeouts shortened through the configuration so nothing here waits long.

const service = await startTestService(t, buildApp, { config: { httpTimeouts: { headersMs: 400, requestMs: 800 } } })
const { app } = service
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as AddressInfo

/** A raw connection, resolved once it is open; `closed` resolves when the server ends it. */
async function open(): Promise<{ socket: Socket; closed: Promise<number>; received: () => string }> {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', (chunk) => (received += chunk.toString()))
  const openedAt = Date.now()
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - openedAt)))
  socket.on('error', () => undefined)
  await new Promise((resolve) => socket.once('connect', resolve))
  t.teardown(() => socket.destroy())
  return { socket, closed, received: () => received }
}

t.test('a connection that never finishes its headers is closed; others are answered meanwhile', async (t) => {
  const slow = await Promise.all(Array.from({ length: 20 }, () => open()))
  for (const { socket } of slow) socket.write('GET /api/v1/health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: ')
  const live = await fetch(`http://127.0.0.1:${port}/api/v1/health/live`)
  t.equal(live.status, 200, 'health answers while they hang')
  const lifetimes = await Promise.all(slow.map(({ closed }) => closed))
  t.ok(
    lifetimes.every((ms) => ms < 5_000),
    `every one closed by the server, after ${Math.min(...lifetimes)}–${Math.max(...lifetimes)} ms`,
  )
})

t.test('a body sent a trickle at a time is cut off at the request timeout', async (t) => {
  const { socket, closed } = await open()
  socket.write(
    'POST /api/v1/organizations HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
  )
  const timer = setInterval(() => socket.write(' '), 100)
  t.teardown(() => clearInterval(timer))
  t.ok((await closed) < 5_000, 'closed by the server')
})

t.test('a declared body larger than the route takes is a 413 before authentication, and is never read', async (t) => {
  const { socket, closed, received } = await open()
  // The analytics batch takes 512,000 bytes; no credentials, and not a byte of the body is sent.
  socket.write(
    'POST /api/v1/organizations/00000000-0000-4000-8000-000000000000/analytics/batch HTTP/1.1\r\nHost: localhost\r\n' +
      'Content-Type: application/json\r\nContent-Length: 10485760\r\n\r\n',
  )
  await closed
  t.match(received(), /^HTTP\/1\.1 413 /, 'refused at once, though not authenticated')
  t.match(received(), /connection: close/i, 'and the connection closed rather than the body read')
  t.match(received(), /"code":"FST_ERR_CTP_BODY_TOO_LARGE"|"code":"PAYLOAD_TOO_LARGE"|Request body is too large/)
})
