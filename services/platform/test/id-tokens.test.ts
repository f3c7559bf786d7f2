import t, { type Test } from 'tap'
import { buildApp } from '@svc/platform'
import { claimsOf, hs256WithKey, signRs256, startTestService, tamperedToken, unsignedToken } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app, issuer } = service
const key = issuer.idp.key

function validClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return {
    sub: 'f2a1c7c4-1111-4222-8333-444455556666',
    email: 'forged@example.com',
    iss: issuer.issuer,
    aud: issuer.clientId,
    token_use: 'id',
    iat: now,
    exp: now + 3600,
    ...overrides,
  }
}

async function profileWith(token: string) {
  return app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${token}` } })
}

async function assertRefused(t: Test, token: string) {
  const response = await profileWith(token)
  t.equal(response.statusCode, 401)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'])
  t.equal(body.code, 'UNAUTHORIZED')
  t.equal(body.error, 'Unauthorized')
  t.equal(body.statusCode, 401)
}

t.test('a token from the configured issuer is accepted and creates the user row by sub', async (t) => {
  const token = service.token('ada@example.com', ['Engineers'])
  const response = await profileWith(token)
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.match(body, { email: 'ada@example.com', groups: ['Engineers'], isPlatformAdmin: false, isEmployee: false })
  const row = await app.database.db
    .selectFrom('core.users')
    .selectAll()
    .where('idpSubject', '=', String(claimsOf(token).sub))
    .executeTakeFirstOrThrow()
  t.equal(row.id, body.userId)
  t.equal(row.email, 'ada@example.com')
})

t.test('a new e-mail in the token updates the same user row', async (t) => {
  const sub = 'aaaaaaaa-0000-4000-8000-000000000001'
  const first = (await profileWith(issuer.idp.mintIdToken({ email: 'old@example.com', sub }))).json()
  const second = (await profileWith(issuer.idp.mintIdToken({ email: 'new@example.com', sub }))).json()
  t.equal(second.userId, first.userId)
  const rows = await app.database.db.selectFrom('core.users').select('email').where('idpSubject', '=', sub).execute()
  t.same(rows, [{ email: 'new@example.com' }])
})

t.test('PlatformAdmins membership is exact and case-sensitive', async (t) => {
  t.equal((await profileWith(service.token('root@example.com', ['PlatformAdmins']))).json().isPlatformAdmin, true)
  t.equal((await profileWith(service.token('imposter@example.com', ['platformadmins']))).json().isPlatformAdmin, false)
  t.equal((await profileWith(service.token('imposter2@example.com', ['PlatformAdmins '.trim() + 'X']))).json().isPlatformAdmin, false)
})

t.test('a groups claim that is not an array means no groups', async (t) => {
  const token = signRs256(key.privateKeyPem, { kid: key.kid }, validClaims({ 'cognito:groups': 'PlatformAdmins' }))
  const body = (await profileWith(token)).json()
  t.same(body.groups, [])
  t.equal(body.isPlatformAdmin, false)
})

t.test('every forged or unfit token gets 401 with the documented body', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = { kid: key.kid }) =>
    signRs256(key.privateKeyPem, header, claims)
  const cases: Record<string, string> = {
    expired: sign(validClaims({ iat: now - 7200, exp: now - 3600 })),
    'not yet valid': sign(validClaims({ nbf: now + 3600 })),
    'wrong issuer': sign(validClaims({ iss: 'https://evil.example.com/pool' })),
    'wrong audience': sign(validClaims({ aud: 'another-client' })),
    'access token': sign(validClaims({ token_use: 'access' })),
    'alg none': unsignedToken(validClaims(), key.kid),
    'HS256 signed with the public key': hs256WithKey(key.publicKeyPem, validClaims(), key.kid),
    'tampered payload': tamperedToken(service.token('victim@example.com'), { email: 'attacker@example.com' }),
    'missing kid': sign(validClaims(), {}),
    'no email': sign(validClaims({ email: undefined })),
    'no exp': sign(validClaims({ exp: undefined })),
    'not a JWT at all': 'not-a-token',
  }
  for (const [name, token] of Object.entries(cases)) {
    await t.test(name, (t) => assertRefused(t, token))
  }
})

t.test('missing credentials get 401', async (t) => {
  const response = await app.inject({ method: 'GET', url: '/api/v1/users/me' })
  t.equal(response.statusCode, 401)
  t.equal(response.json().code, 'UNAUTHORIZED')
  const basic = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: 'Basic abc' } })
  t.equal(basic.statusCode, 401)
})

t.test('an unknown kid storm fetches the JWKS at most 5 times a minute', async (t) => {
  const before = issuer.jwksRequests()
  const responses = await Promise.all(
    Array.from({ length: 40 }, (_, index) => profileWith(signRs256(key.privateKeyPem, { kid: `unknown-${index}` }, validClaims()))),
  )
  t.ok(responses.every((response) => response.statusCode === 401))
  t.ok(issuer.jwksRequests() - before <= 5, `fetched ${issuer.jwksRequests() - before} times`)
  // Concurrent misses share one fetch; one after another, they spend the budget...
  for (let index = 0; index < 10; index += 1) await profileWith(signRs256(key.privateKeyPem, { kid: `sequential-${index}` }, validClaims()))
  t.ok(issuer.jwksRequests() - before <= 5, `fetched ${issuer.jwksRequests() - before} times`)
  // ...and once it is spent, a further unknown kid is refused without a request...
  const spent = issuer.jwksRequests()
  t.equal((await profileWith(signRs256(key.privateKeyPem, { kid: 'yet-another' }, validClaims()))).statusCode, 401)
  t.equal(issuer.jwksRequests(), spent)
  // ...while tokens signed with the known key still pass.
  t.equal((await profileWith(service.token('still-fine@example.com'))).statusCode, 200)
})
