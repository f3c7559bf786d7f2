import t from 'tap'
import { assertionProblem, runCheck, type RunnableCheck } from '../src/index.js'
import { startDns, startHttp, startHttps, startTcp, startTls } from './servers.js'

const allowed = { allowPrivateTargets: true }
const refused = { allowPrivateTargets: false }
const base = { timeoutMs: 2000, degradedMs: null, retries: 0 }

t.test('an HTTP check passes on a 2xx with every assertion holding, with each phase timed', async (t) => {
  const url = await startHttp(t.teardown, (request, body, response) => {
    response.setHeader('content-type', 'application/json')
    response.setHeader('x-version', '42')
    response.end(JSON.stringify({ status: 'ok', method: request.method, echo: body, auth: request.headers.authorization, items: [1, 2] }))
  })
  const check: RunnableCheck = {
    kind: 'http',
    ...base,
    request: {
      method: 'POST',
      url: `${url}/health`,
      headers: { authorization: 'Bearer s3cret' },
      body: 'ping',
      assertions: [
        { source: 'statusCode', comparison: 'equals', target: '200' },
        { source: 'responseTime', comparison: 'lessThan', target: '2000' },
        { source: 'header', property: 'X-Version', comparison: 'equals', target: '42' },
        { source: 'jsonPath', property: '$.status', comparison: 'equals', target: 'ok' },
        { source: 'jsonPath', property: '$.items.length', comparison: 'greaterThan', target: '1' },
        { source: 'jsonPath', property: '$.auth', comparison: 'equals', target: 'Bearer s3cret' },
        { source: 'body', comparison: 'contains', target: '"echo":"ping"' },
        { source: 'body', comparison: 'matches', target: '"method":"POST"' },
      ],
    },
  }
  const run = await runCheck(check, allowed)
  t.equal(run.status, 'passing', JSON.stringify(run.attempts[0]?.assertions.filter((outcome) => !outcome.passed)))
  const [only] = run.attempts
  t.equal(only?.statusCode, 200)
  t.ok(only!.timings.connect! >= 0 && only!.timings.firstByte! >= only!.timings.connect!, 'connect before first byte')
  t.ok(only!.timings.total >= only!.timings.firstByte!, 'first byte before the end')
  t.equal(only?.assertions.length, 8)
})

t.test('a failed assertion fails the attempt and says what was seen', async (t) => {
  const url = await startHttp(t.teardown, (_request, _body, response) => {
    response.statusCode = 503
    response.end('{"status":"down"}')
  })
  const run = await runCheck(
    {
      kind: 'http',
      ...base,
      request: {
        url,
        assertions: [
          { source: 'statusCode', comparison: 'lessThan', target: '400' },
          { source: 'jsonPath', property: '$.status', comparison: 'equals', target: 'ok' },
          { source: 'header', property: 'x-missing', comparison: 'notEmpty' },
          { source: 'body', comparison: 'notContains', target: 'down' },
        ],
      },
    },
    allowed,
  )
  t.equal(run.status, 'failing')
  t.same(
    run.attempts[0]!.assertions.map((outcome) => [outcome.source, outcome.actual, outcome.passed]),
    [
      ['statusCode', '503', false],
      ['jsonPath', 'down', false],
      ['header', null, false],
      ['body', '{"status":"down"}', false],
    ],
  )
})

t.test('with no assertions, a status of 400 or more fails and redirects are followed unless told not to', async (t) => {
  const url = await startHttp(t.teardown, (request, _body, response) => {
    if (request.url === '/moved') {
      response.writeHead(302, { location: '/missing' })
      return response.end()
    }
    response.statusCode = 404
    response.end('nope')
  })
  const followed = await runCheck({ kind: 'http', ...base, request: { url: `${url}/moved` } }, allowed)
  t.equal(followed.status, 'failing')
  t.equal(followed.attempts[0]!.statusCode, 404)
  t.equal(followed.attempts[0]!.error, 'HTTP 404')
  const stopped = await runCheck({ kind: 'http', ...base, request: { url: `${url}/moved`, followRedirects: false } }, allowed)
  t.equal(stopped.status, 'passing')
  t.equal(stopped.attempts[0]!.statusCode, 302)
})

t.test('a redirect to another origin is followed with the host and credentials left behind, a 303 as a GET', async (t) => {
  const seen: Array<{ method: string; authorization?: string; host?: string; body: string }> = []
  const other = await startHttp(t.teardown, (request, body, response) => {
    seen.push({ method: request.method!, authorization: request.headers.authorization, host: request.headers.host, body })
    response.end('{"where":"other"}')
  })
  const first = await startHttp(t.teardown, (request, _body, response) => {
    response.writeHead(request.url === '/see-other' ? 303 : 307, { location: `${other}/landed` })
    response.end()
  })
  const run = await runCheck(
    {
      kind: 'http',
      ...base,
      request: {
        method: 'POST',
        url: `${first}/moved`,
        headers: { authorization: 'Bearer s3cret' },
        body: 'ping',
        assertions: [{ source: 'jsonPath', property: '$.where', comparison: 'equals', target: 'other' }],
      },
    },
    allowed,
  )
  t.equal(run.status, 'passing')
  t.same(seen[0], { method: 'POST', authorization: undefined, host: new URL(other).host, body: 'ping' }, 'a 307 keeps the method and body')
  await runCheck({ kind: 'http', ...base, request: { method: 'POST', url: `${first}/see-other`, body: 'ping' } }, allowed)
  t.same(seen[1], { method: 'GET', authorization: undefined, host: new URL(other).host, body: '' }, 'a 303 is followed with a GET')
})

t.test('assertions read at most 1 MiB of a body; the rest is not waited for', async (t) => {
  const url = await startHttp(t.teardown, (_request, _body, response) => {
    // 1 MiB and a marker, then a body that never ends: only a runner that stops reading passes.
    response.write('x'.repeat(1024 * 1024))
    response.write('MARKER')
  })
  const run = await runCheck(
    { kind: 'http', ...base, request: { url, assertions: [{ source: 'body', comparison: 'notContains', target: 'MARKER' }] } },
    allowed,
  )
  t.equal(run.status, 'passing', run.attempts[0]?.error ?? 'the marker past the limit is not read')
  t.equal(run.attempts[0]!.statusCode, 200)
})

t.test('a server keeping connections alive briefly, or closing them, answers as any other', async (t) => {
  const url = await startHttp(t.teardown, (request, _body, response) => {
    if (request.url === '/close') response.setHeader('connection', 'close')
    else response.setHeader('keep-alive', 'timeout=1')
    response.end('ok')
  })
  for (const path of ['/brief', '/close']) {
    const run = await runCheck({ kind: 'http', ...base, request: { url: `${url}${path}` } }, allowed)
    t.equal(run.status, 'passing', `${path}: ${run.attempts[0]?.error ?? ''}`)
  }
})

t.test('a slow answer is degraded past the threshold and failing past the timeout', async (t) => {
  const url = await startHttp(t.teardown, (_request, _body, response) => {
    setTimeout(() => response.end('late'), 150)
  })
  const degraded = await runCheck({ kind: 'http', ...base, degradedMs: 50, request: { url } }, allowed)
  t.equal(degraded.status, 'degraded')
  const timedOut = await runCheck({ kind: 'http', ...base, timeoutMs: 50, request: { url } }, allowed)
  t.equal(timedOut.status, 'failing')
  t.match(timedOut.attempts[0]!.error, /timed out after 50 ms/)
})

t.test('retries: a failure counts only when every attempt failed; a later success ends the run', async (t) => {
  let calls = 0
  const url = await startHttp(t.teardown, (_request, _body, response) => {
    calls += 1
    response.statusCode = calls < 3 ? 500 : 200
    response.end()
  })
  const run = await runCheck({ kind: 'http', ...base, retries: 3, request: { url } }, allowed)
  t.equal(run.status, 'passing')
  t.same(
    run.attempts.map((one) => one.status),
    ['failing', 'failing', 'passing'],
  )
  const failing = await runCheck({ kind: 'http', ...base, retries: 1, request: { url: 'http://127.0.0.1:1/' } }, allowed)
  t.equal(failing.attempts.length, 2)
  t.match(failing.attempts[1]!.error, /ECONNREFUSED/)
})

t.test('HTTPS: a self-signed certificate fails the handshake, with the TLS phase timed when it works', async (t) => {
  const url = await startHttps(t.teardown, (_request, _body, response) => response.end('secure'))
  const run = await runCheck({ kind: 'http', ...base, request: { url } }, allowed)
  t.equal(run.status, 'failing')
  t.match(run.attempts[0]!.error, /TLS handshake failed|self.signed|certificate/i)
})

t.test('private targets are refused unless allowed, at connect time', async (t) => {
  const url = await startHttp(t.teardown, (_request, _body, response) => response.end('ok'))
  const run = await runCheck({ kind: 'http', ...base, request: { url } }, refused)
  t.equal(run.status, 'failing')
  t.match(run.attempts[0]!.error, /non-public address/)
  const tcp = await runCheck({ kind: 'tcp', ...base, request: { host: 'localhost', port: 80 } }, refused)
  t.match(tcp.attempts[0]!.error, /non-public address/)
})

t.test('a TCP check times the connection and fails on a closed port', async (t) => {
  const port = await startTcp(t.teardown)
  const run = await runCheck(
    {
      kind: 'tcp',
      ...base,
      request: { host: '127.0.0.1', port, assertions: [{ source: 'responseTime', comparison: 'lessThan', target: '1000' }] },
    },
    allowed,
  )
  t.equal(run.status, 'passing')
  t.ok(run.attempts[0]!.timings.connect! >= 0)
  const closed = await runCheck({ kind: 'tcp', ...base, request: { host: '127.0.0.1', port: 1 } }, allowed)
  t.equal(closed.status, 'failing')
  t.match(closed.attempts[0]!.error, /ECONNREFUSED/)
})

t.test('a DNS check compares the answers with the expected values, asking the given server', async (t) => {
  const nameserver = await startDns(t.teardown, {
    'api.example.test': [
      { type: 'A', data: '192.0.2.10' },
      { type: 'A', data: '192.0.2.11' },
    ],
    'example.test': [
      { type: 'MX', data: { preference: 10, exchange: 'mail.example.test' } },
      { type: 'TXT', data: ['v=spf1 -all'] },
    ],
  })
  const a = await runCheck(
    { kind: 'dns', ...base, request: { name: 'api.example.test', recordType: 'A', nameserver, expectedValues: ['192.0.2.11'] } },
    allowed,
  )
  t.equal(a.status, 'passing', a.attempts[0]!.error ?? '')
  t.same(a.attempts[0]!.details, { answers: ['192.0.2.10', '192.0.2.11'] })
  const mx = await runCheck(
    { kind: 'dns', ...base, request: { name: 'example.test', recordType: 'MX', nameserver, expectedValues: ['10 MAIL.example.test.'] } },
    allowed,
  )
  t.equal(mx.status, 'passing', mx.attempts[0]!.error ?? '')
  const txt = await runCheck(
    {
      kind: 'dns',
      ...base,
      request: {
        name: 'example.test',
        recordType: 'TXT',
        nameserver,
        assertions: [{ source: 'body', comparison: 'contains', target: 'spf1' }],
      },
    },
    allowed,
  )
  t.equal(txt.status, 'passing', txt.attempts[0]!.error ?? '')
  const wrong = await runCheck(
    { kind: 'dns', ...base, request: { name: 'api.example.test', recordType: 'A', nameserver, expectedValues: ['192.0.2.99'] } },
    allowed,
  )
  t.equal(wrong.status, 'failing')
  t.match(wrong.attempts[0]!.error, /expected "192.0.2.99"/)
  const missing = await runCheck({ kind: 'dns', ...base, request: { name: 'nothing.example.test', recordType: 'A', nameserver } }, allowed)
  t.equal(missing.status, 'failing')
  t.match(missing.attempts[0]!.error, /ENOTFOUND/)
  const refusedServer = await runCheck(
    { kind: 'dns', ...base, request: { name: 'api.example.test', recordType: 'A', nameserver } },
    refused,
  )
  t.match(refusedServer.attempts[0]!.error, /non-public address/)
})

t.test('a TLS check reads the certificate expiry: enough days pass, too few fail, untrusted chains fail unless allowed', async (t) => {
  const soon = await startTls(t.teardown, new Date(Date.now() + 5 * 86_400_000))
  const later = await startTls(t.teardown, new Date(Date.now() + 60 * 86_400_000))
  const untrusted = await runCheck({ kind: 'tls', ...base, request: { host: '127.0.0.1', port: later } }, allowed)
  t.equal(untrusted.status, 'failing')
  t.match(untrusted.attempts[0]!.error, /TLS handshake failed/)
  const fine = await runCheck(
    { kind: 'tls', ...base, request: { host: '127.0.0.1', port: later, allowUntrusted: true, daysBeforeExpiry: 30 } },
    allowed,
  )
  t.equal(fine.status, 'passing', fine.attempts[0]!.error ?? '')
  t.ok(fine.attempts[0]!.timings.tls! >= fine.attempts[0]!.timings.connect!)
  t.match(fine.attempts[0]!.details, { subject: 'localhost' })
  const expiring = await runCheck({ kind: 'tls', ...base, request: { host: 'localhost', port: soon, allowUntrusted: true } }, allowed)
  t.equal(expiring.status, 'failing')
  t.match(expiring.attempts[0]!.error, /expires in [45] days \(fewer than 14\)/)
})

t.test('assertions that can never be compared are refused when saved', async (t) => {
  t.equal(assertionProblem({ source: 'header', comparison: 'equals', target: 'x' }), 'property: a header assertion names its header')
  t.equal(
    assertionProblem({ source: 'jsonPath', property: 'status', comparison: 'equals', target: 'x' }),
    'property: a JSONPath starts with $',
  )
  t.equal(assertionProblem({ source: 'statusCode', comparison: 'equals' }), 'target: this comparison needs a target')
  t.equal(assertionProblem({ source: 'statusCode', comparison: 'equals', target: 'ok' }), 'target: statusCode is compared with a number')
  t.equal(
    assertionProblem({ source: 'body', comparison: 'lessThan', target: 'x' }),
    'target: must be a number for greaterThan and lessThan',
  )
  t.equal(
    assertionProblem({ source: 'body', comparison: 'matches', target: '(' }),
    'target: not a valid regular expression (RE2 syntax: no lookaround, no backreferences)',
  )
  t.equal(assertionProblem({ source: 'statusCode', property: 'x', comparison: 'isEmpty' }), 'property: a statusCode assertion takes none')
  t.equal(assertionProblem({ source: 'body', comparison: 'isEmpty' }), undefined)
})

t.test('DNS: AAAA and CNAME answers, a nameserver given with or without a port, and a timeout', async (t) => {
  const nameserver = await startDns(t.teardown, {
    'v6.example.test': [{ type: 'AAAA', data: '2001:db8::1' }],
    'www.example.test': [{ type: 'CNAME', data: 'edge.example.net' }],
  })
  const aaaa = await runCheck(
    { kind: 'dns', ...base, request: { name: 'v6.example.test', recordType: 'AAAA', nameserver, expectedValues: ['2001:db8::1'] } },
    allowed,
  )
  t.equal(aaaa.status, 'passing', aaaa.attempts[0]!.error ?? '')
  const cname = await runCheck(
    {
      kind: 'dns',
      ...base,
      request: {
        name: 'www.example.test',
        recordType: 'CNAME',
        nameserver: `[127.0.0.1]:${nameserver.split(':')[1]}`,
        expectedValues: ['edge.example.net.'],
      },
    },
    allowed,
  )
  t.equal(cname.status, 'passing', cname.attempts[0]!.error ?? '')
  // Port 53 on loopback answers nothing here: the resolver gives up at the timeout.
  const silent = await runCheck(
    { kind: 'dns', ...base, timeoutMs: 300, request: { name: 'x.example.test', recordType: 'A', nameserver: '127.0.0.1' } },
    allowed,
  )
  t.equal(silent.status, 'failing')
  t.match(silent.attempts[0]!.error, /timed out|ECONNREFUSED|A x\.example\.test/)
})

t.test('TLS: an expired certificate fails; the SNI name can be given; a closed port fails', async (t) => {
  const expired = await startTls(t.teardown, new Date(Date.now() - 86_400_000 / 2))
  const run = await runCheck(
    { kind: 'tls', ...base, request: { host: '127.0.0.1', port: expired, servername: 'localhost', allowUntrusted: true } },
    allowed,
  )
  t.equal(run.status, 'failing')
  t.match(run.attempts[0]!.error, /expired|expires in/)
  const closed = await runCheck({ kind: 'tls', ...base, request: { host: '127.0.0.1', port: 1, allowUntrusted: true } }, allowed)
  t.match(closed.attempts[0]!.error, /ECONNREFUSED/)
})

t.test('a host that does not resolve fails the attempt with the lookup error', async (t) => {
  const run = await runCheck({ kind: 'tcp', ...base, request: { host: 'no-such-host.invalid', port: 80 } }, allowed)
  t.equal(run.status, 'failing')
  t.match(run.attempts[0]!.error, /DNS lookup of no-such-host\.invalid failed/)
})
