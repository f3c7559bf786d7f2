import t from 'tap'
import { acceptInvitationOf, startTestService, unsignedToken } from '@svc/testkit'
import { buildApp } from '../src/app.js'

// Rate limit, authentication, access rule, then validation, then the handler (decision 0012).

const service = await startTestService(t, buildApp)
const { app } = service
const owner = await service.signIn('owner@gates.example')
const member = await service.signIn('member@gates.example')
const outsider = await service.signIn('outsider@gates.example')
const organization = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'Gates', slug: 'gates' } })
).json() as { id: string }
const orgUrl = `/api/v1/organizations/${organization.id}`
const added = await app.inject({
  method: 'POST',
  url: `${orgUrl}/members`,
  headers: owner.headers,
  payload: { email: 'member@gates.example', role: 'member' },
})
const memberId = (added.json() as { id: string }).id
await acceptInvitationOf(app, member)

const send = (method: 'PUT' | 'DELETE' | 'POST', url: string, headers: Record<string, string>, payload: string) =>
  app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload })

t.test('an outsider gets 404 whatever the body, a member without the role 403, and only a caller who may gets 400', async (t) => {
  for (const payload of ['{"confirm": 42, "extra": true}', '{not json', '']) {
    t.equal((await send('DELETE', orgUrl, outsider.headers, payload)).statusCode, 404, `outsider deleting with ${JSON.stringify(payload)}`)
    t.equal((await send('DELETE', orgUrl, member.headers, payload)).statusCode, 403, `member deleting with ${JSON.stringify(payload)}`)
  }
  const badRole = '{"role": "emperor", "productRoles": "all"}'
  t.equal((await send('PUT', `${orgUrl}/members/${memberId}`, outsider.headers, badRole)).statusCode, 404)
  t.equal((await send('PUT', `${orgUrl}/members/${memberId}`, member.headers, badRole)).statusCode, 403)
  const refused = await send('PUT', `${orgUrl}/members/${memberId}`, owner.headers, badRole)
  t.equal(refused.statusCode, 400, 'the owner may make the call, so learns what is wrong with the body')
  t.equal(refused.json().code, 'VALIDATION_FAILED')
  t.equal((await send('DELETE', orgUrl, owner.headers, '{"confirm": 42}')).statusCode, 400)
  t.equal((await app.inject({ method: 'GET', url: orgUrl, headers: owner.headers })).statusCode, 200, 'nothing was deleted')
})

t.test('failed authentications count against the client limit, forged tokens and wrong SCIM tokens alike', async (t) => {
  const limited = await startTestService(t, buildApp, { config: { rateLimit: { max: 3, timeWindow: '1 minute' } } })
  const forged = { authorization: `Bearer ${unsignedToken({ sub: 'x', email: 'x@example.com' }, 'forged-kid')}` }
  const statuses: number[] = []
  for (let attempt = 0; attempt < 4; attempt += 1)
    statuses.push((await limited.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: forged })).statusCode)
  t.same(statuses, [401, 401, 401, 429])

  const scimLimited = await startTestService(t, buildApp, { config: { rateLimit: { max: 2, timeWindow: '1 minute' } } })
  const wrong = { authorization: 'Bearer scim_wrong-token' }
  const scimStatuses: number[] = []
  let last
  for (let attempt = 0; attempt < 3; attempt += 1) {
    last = await scimLimited.app.inject({ method: 'GET', url: '/api/v1/scim/v2/Users', headers: wrong })
    scimStatuses.push(last.statusCode)
  }
  t.same(scimStatuses, [401, 401, 429])
  t.ok(Number(last?.headers['retry-after']) > 0, 'with Retry-After')
})

t.test('with a hop count, the client address is the one the trusted proxy saw, not one the client wrote', async (t) => {
  const behindProxy = await startTestService(t, buildApp, { config: { trustProxy: 1, rateLimit: { max: 2, timeWindow: '1 minute' } } })
  const statuses: number[] = []
  for (const spoofed of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) {
    const response = await behindProxy.app.inject({
      method: 'GET',
      url: '/api/v1/openapi.json',
      headers: { 'x-forwarded-for': `${spoofed}, 198.51.100.9` },
    })
    statuses.push(response.statusCode)
  }
  t.same(statuses, [200, 200, 429], 'a new first entry each time does not make a new client')
  const other = await behindProxy.app.inject({
    method: 'GET',
    url: '/api/v1/openapi.json',
    headers: { 'x-forwarded-for': '198.51.100.10' },
  })
  t.equal(other.statusCode, 200, 'another client behind the same proxy has its own count')
})

t.test('an IPv6 client is counted by its /64, and an IPv4-mapped address as the IPv4 address', async (t) => {
  const behindProxy = await startTestService(t, buildApp, { config: { trustProxy: 1, rateLimit: { max: 2, timeWindow: '1 minute' } } })
  const statusFrom = async (address: string) =>
    (await behindProxy.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { 'x-forwarded-for': address } })).statusCode
  const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:DB8:1:2::1']
  const statuses: number[] = []
  for (const address of sameNetwork) statuses.push(await statusFrom(address))
  t.same(statuses, [200, 200, 429], 'three addresses of one /64, in any letter case, are one client')
  t.equal(await statusFrom('2001:db8:1:3::1'), 200, 'the next /64 is another client')
  t.equal(await statusFrom('192.0.2.7'), 200)
  t.equal(await statusFrom('::ffff:192.0.2.7'), 200)
  t.equal(await statusFrom('192.0.2.7'), 429, 'the mapped address counted as the IPv4 address')
})

t.test('TRUST_PROXY=true lets a client choose its address, so a service started with it warns', async (t) => {
  const lines: string[] = []
  const trusting = await startTestService(t, buildApp, {
    config: { trustProxy: true, logLevel: 'warn', logDestination: { write: (line: string) => void lines.push(line) } },
  })
  const seen = await trusting.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { 'x-forwarded-for': '6.6.6.6' } })
  t.equal(seen.statusCode, 200)
  t.match(lines.join(''), /TRUST_PROXY=true believes every X-Forwarded-For entry/)
})

t.test('the audit log records the request id the service generated, never the caller’s', async (t) => {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: { ...owner.headers, 'x-request-id': 'caller-chosen' },
    payload: { name: 'Request ids', slug: 'request-ids' },
  })
  t.equal(response.statusCode, 201)
  const entry = await app.database.db
    .selectFrom('core.auditLogs')
    .select('requestId')
    .where('entityId', '=', response.json().id)
    .executeTakeFirstOrThrow()
  t.not(entry.requestId, 'caller-chosen')
  t.match(entry.requestId, /^[0-9a-f-]{36}$/)
})

t.test('public URLs come from PUBLIC_PLATFORM_URL when it is set, never from the Host header', async (t) => {
  const configured = await startTestService(t, buildApp, { config: { publicUrls: { platform: 'https://platform.example.com' } } })
  const admin = await configured.signIn('admin@public-urls.example')
  const created = (
    await configured.app.inject({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: admin.headers,
      payload: { name: 'Public', slug: 'public' },
    })
  ).json() as { id: string }
  const token = (
    await configured.app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${created.id}/scim-tokens`,
      headers: admin.headers,
      payload: { name: 'idp' },
    })
  ).json().token as string
  const evilHost = { host: 'attacker.example', 'x-forwarded-host': 'attacker.example' }
  const users = (
    await configured.app.inject({ method: 'GET', url: '/api/v1/scim/v2/Users', headers: { ...evilHost, authorization: `Bearer ${token}` } })
  ).json()
  t.match(users.Resources[0].meta.location, /^https:\/\/platform\.example\.com\/api\/v1\/scim\/v2\/Users\//)
  const metadata = await configured.app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${created.id}/sso/metadata`,
    headers: evilHost,
  })
  t.equal(metadata.statusCode, 200)
  t.match(metadata.body, `entityID="https://platform.example.com/api/v1/organizations/${created.id}/sso/metadata"`)
  t.match(metadata.body, `Location="https://platform.example.com/api/v1/organizations/${created.id}/sso/acs"`)
  t.notMatch(metadata.body, 'attacker')
})
