import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { checkTarget, createOutboundClient } from '../src/destinations/http.js'

const strict = { allowPrivateTargets: false }

t.test('targets that resolve to loopback, private or link-local addresses are refused', async (t) => {
  for (const url of [
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://10.1.2.3/hook',
    'http://192.168.0.10/hook',
    'http://172.16.5.4/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://0.0.0.0/hook',
  ]) {
    await t.rejects(checkTarget(url, strict), { name: 'TargetRefused' }, url)
  }
  await t.rejects(checkTarget('ftp://example.com/x', strict), /http or https/)
  await t.rejects(checkTarget('https://user:pass@example.com/x', strict), /credentials/)
  await t.rejects(checkTarget('not a url', strict), /absolute URL/)
  await t.rejects(checkTarget('https://no-such-host.invalid/x', strict), /does not resolve/)
  t.equal((await checkTarget('https://93.184.215.14/hook', strict)).hostname, '93.184.215.14', 'a public address passes')
  t.equal(
    (await checkTarget('http://127.0.0.1/hook', { allowPrivateTargets: true })).hostname,
    '127.0.0.1',
    'ALLOW_PRIVATE_TARGETS lets it through',
  )
})

t.test('the client refuses non-public targets, and posts JSON when they are allowed', async (t) => {
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => response.writeHead(202).end(`got ${request.headers['content-type']} ${body}`))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const url = `http://localhost:${(server.address() as AddressInfo).port}/hook`
  const guarded = createOutboundClient(strict)
  t.teardown(() => guarded.close())
  await t.rejects(guarded.postJson(url, '{}'), { name: 'TargetRefused' })
  const open = createOutboundClient({ allowPrivateTargets: true })
  t.teardown(() => open.close())
  t.same(await open.postJson(url, '{"a":1}'), { status: 202, body: 'got application/json {"a":1}' })
})
