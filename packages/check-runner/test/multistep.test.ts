import t from 'tap'
import { runCheck, type RunnableCheck } from '../src/index.js'
import { startHttp } from './servers.js'

// Multi-step API checks (issue 59): a login step's token carried to two calls, each step's
// outcome and timings kept, the first failing step ending the run and named in its error.
const allowed = { allowPrivateTargets: true }
const base = { timeoutMs: 3000, degradedMs: null, retries: 0 }

/** A small API: POST /login gives a token (JSON) and a session id (a header); /orders needs the token. */
async function startShop(teardown: (fn: () => unknown) => void, broken = { orders: false }) {
  return startHttp(teardown, (request, body, response) => {
    const token = 'tok-1234'
    if (request.url === '/login' && request.method === 'POST') {
      const { password } = JSON.parse(body || '{}') as { password?: string }
      if (password !== 'hunter2') return response.writeHead(401).end()
      response.writeHead(200, { 'content-type': 'application/json', 'x-session': 'sess-77' })
      return response.end(JSON.stringify({ data: { token } }))
    }
    if (request.headers.authorization !== `Bearer ${token}`) return response.writeHead(401).end()
    if (request.url === '/orders') {
      if (broken.orders) return response.writeHead(500).end('database unavailable')
      response.writeHead(200, { 'content-type': 'text/html' })
      return response.end('<p>Your order <b id="order">A-981</b> ships today.</p>')
    }
    if (request.url === '/orders/A-981' && request.headers['x-session'] === 'sess-77') {
      response.writeHead(200, { 'content-type': 'application/json' })
      return response.end(JSON.stringify({ id: 'A-981', status: 'shipped' }))
    }
    response.writeHead(404).end()
  })
}

const steps = (url: string): RunnableCheck => ({
  kind: 'multistep',
  ...base,
  request: {
    steps: [
      {
        name: 'log in',
        method: 'POST',
        url: `${url}/login`,
        headers: { 'content-type': 'application/json' },
        body: '{"password":"hunter2"}',
        assertions: [{ source: 'statusCode', comparison: 'equals', target: '200' }],
        extract: [
          { variable: 'TOKEN', source: 'jsonPath', property: '$.data.token' },
          { variable: 'SESSION', source: 'header', property: 'X-Session' },
        ],
      },
      {
        name: 'list orders',
        url: `${url}/orders`,
        headers: { authorization: 'Bearer {{TOKEN}}' },
        extract: [{ variable: 'ORDER', source: 'body', property: 'id="order">([A-Z]-[0-9]+)<' }],
      },
      {
        name: 'read the order',
        url: `${url}/orders/{{ORDER}}`,
        headers: { authorization: 'Bearer {{TOKEN}}', 'x-session': '{{SESSION}}' },
        assertions: [{ source: 'jsonPath', property: '$.status', comparison: 'equals', target: 'shipped' }],
      },
    ],
  },
})

t.test('a token from the login step reaches the two calls after it; each step is kept with its timings', async (t) => {
  const run = await runCheck(steps(await startShop(t.teardown)), allowed)
  t.equal(run.status, 'passing', JSON.stringify(run.attempts[0]))
  const [attempt] = run.attempts
  t.equal(attempt!.statusCode, 200)
  t.same(
    attempt!.steps!.map((step) => [step.name, step.status, step.statusCode, step.extracted]),
    [
      ['log in', 'passing', 200, ['TOKEN', 'SESSION']],
      ['list orders', 'passing', 200, ['ORDER']],
      ['read the order', 'passing', 200, []],
    ],
  )
  for (const step of attempt!.steps!) t.ok(step.timings.total > 0 && step.timings.connect !== undefined, `${step.name} is timed`)
  const total = attempt!.steps!.reduce((sum, step) => sum + step.timings.total, 0)
  t.ok(Math.abs(attempt!.timings.total - total) < 0.1, 'the run’s time is its steps’')
  t.notMatch(JSON.stringify(run), /tok-1234|sess-77/, 'no extracted value is kept in the result')
})

t.test('the first failing step ends the run and is named; the steps after it do not run', async (t) => {
  const broken = { orders: true }
  const run = await runCheck(steps(await startShop(t.teardown, broken)), allowed)
  t.equal(run.status, 'failing')
  const [attempt] = run.attempts
  t.equal(attempt!.error, 'step 2 "list orders": HTTP 500')
  t.same(
    attempt!.steps!.map((step) => step.status),
    ['passing', 'failing'],
  )

  const wrongPassword = steps(await startShop(t.teardown))
  if (wrongPassword.kind !== 'multistep') throw new Error('unreachable')
  wrongPassword.request.steps[0]!.body = '{"password":"nope"}'
  const refused = await runCheck(wrongPassword, allowed)
  t.equal(refused.attempts[0]!.error, 'step 1 "log in": assertion failed: statusCode equals 200 (was 401)')

  const missing = steps(await startShop(t.teardown))
  if (missing.kind !== 'multistep') throw new Error('unreachable')
  missing.request.steps[1]!.extract = [{ variable: 'ORDER', source: 'body', property: 'id="invoice">(.+)<' }]
  const nothing = await runCheck(missing, allowed)
  t.equal(nothing.attempts[0]!.error, 'step 2 "list orders": extracted nothing for ORDER (body id="invoice">(.+)<)')
})

t.test('the steps share the check’s timeout, and a private target is refused at each connection', async (t) => {
  // The second step's answer never comes: the step is ended by what the check's timeout left it.
  const hanging = await startHttp(t.teardown, (request, _body, response) => {
    if (request.url === '/a') response.end('quick')
  })
  const run = await runCheck(
    {
      kind: 'multistep',
      ...base,
      timeoutMs: 300,
      request: {
        steps: [
          { name: 'first', url: `${hanging}/a` },
          { name: 'second', url: `${hanging}/b` },
        ],
      },
    },
    allowed,
  )
  t.equal(run.status, 'failing')
  const [, limit] = /^step 2 "second": timed out after (\d+) ms$/.exec(run.attempts[0]!.error ?? '') ?? []
  t.ok(limit !== undefined && Number(limit) <= 300, `the second step gets what the first left (${run.attempts[0]!.error})`)
  const refused = await runCheck(steps(await startShop(t.teardown)), { allowPrivateTargets: false })
  t.match(refused.attempts[0]!.error, /^step 1 "log in": /)
  t.equal(refused.attempts[0]!.steps!.length, 1)
})
