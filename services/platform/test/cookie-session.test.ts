import t from 'tap'
import { buildApp } from '@svc/platform'
import { startTestIssuer, startTestService } from '@svc/testkit'

const issuer = await startTestIssuer(t, { clientSecret: 'app-client-secret' })
const service = await startTestService(t, buildApp, {
  issuer,
  config: {
    auth: {
      issuer: issuer.issuer,
      jwksUrl: issuer.jwksUrl,
      clientIds: [issuer.clientId],
      clientSecret: 'app-client-secret',
      tokenUrl: issuer.tokenUrl,
      groupsClaim: 'cognito:groups',
    },
    cookies: { domain: 'example.com', allowedOrigins: ['https://app.example.com'] },
  },
})
const { app } = service

type SetCookie = {
  name: string
  value: string
  maxAge?: number
  domain?: string
  path?: string
  httpOnly?: boolean
  secure?: boolean
  sameSite?: string
}

function cookiesOf(response: { cookies: unknown }): Record<string, SetCookie> {
  return Object.fromEntries((response.cookies as SetCookie[]).map((cookie) => [cookie.name, cookie]))
}

function rawSetCookies(response: { headers: Record<string, unknown> }): string[] {
  const header = response.headers['set-cookie']
  return Array.isArray(header) ? header : header === undefined ? [] : [String(header)]
}

t.test('set-cookie stores both tokens with every required attribute', async (t) => {
  const idToken = service.token('cookie@example.com')
  const refreshToken = issuer.idp.mintRefreshToken({ email: 'cookie@example.com' })
  const response = await app.inject({ method: 'POST', url: '/auth/set-cookie', payload: { idToken, refreshToken } })
  t.equal(response.statusCode, 200)
  t.equal(response.json().status, 'ok')
  const raw = rawSetCookies(response)
  const id = raw.find((line) => line.startsWith('svc_id_token='))
  const refresh = raw.find((line) => line.startsWith('svc_refresh_token='))
  t.ok(id && refresh)
  for (const line of [id, refresh]) {
    t.match(line, /; HttpOnly/)
    t.match(line, /; Secure/)
    t.match(line, /; SameSite=Lax/)
    t.match(line, /; Domain=example\.com/)
  }
  t.match(id, /; Path=\/(;|$)/)
  t.match(refresh, /; Path=\/auth(;|$)/, 'the refresh token is sent only to /auth/*')
  t.match(id, /Max-Age=3600(;|$)/)
  t.match(refresh, /Max-Age=2592000(;|$)/)
  t.equal(cookiesOf(response).svc_id_token?.value, idToken)
})

t.test('set-cookie verifies the ID token before setting anything', async (t) => {
  const forged = service.token('cookie@example.com').slice(0, -4) + 'AAAA'
  const response = await app.inject({ method: 'POST', url: '/auth/set-cookie', payload: { idToken: forged } })
  t.equal(response.statusCode, 401)
  t.equal(response.json().code, 'UNAUTHORIZED')
  t.same(rawSetCookies(response), [])
  const missing = await app.inject({ method: 'POST', url: '/auth/set-cookie', payload: {} })
  t.equal(missing.statusCode, 400)
  t.equal(missing.json().code, 'VALIDATION_FAILED')
  t.same(rawSetCookies(missing), [])
})

t.test('GET /auth/me answers the user at the top level, from the cookie or the header', async (t) => {
  const token = service.token('me@example.com', ['Ops'])
  const viaCookie = await app.inject({ method: 'GET', url: '/auth/me', cookies: { svc_id_token: token } })
  t.equal(viaCookie.statusCode, 200)
  t.match(viaCookie.json(), { email: 'me@example.com', groups: ['Ops'], isPlatformAdmin: false })
  t.same(Object.keys(viaCookie.json()).sort(), ['email', 'groups', 'isPlatformAdmin', 'userId'])
  const viaHeader = await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } })
  t.same(viaHeader.json(), viaCookie.json())
})

t.test('the cookie wins over the header, and an invalid cookie does not fall back', async (t) => {
  const cookieUser = service.token('cookie-user@example.com')
  const headerUser = service.token('header-user@example.com')
  const both = await app.inject({
    method: 'GET',
    url: '/auth/me',
    cookies: { svc_id_token: cookieUser },
    headers: { authorization: `Bearer ${headerUser}` },
  })
  t.equal(both.json().email, 'cookie-user@example.com')
  const badCookie = await app.inject({
    method: 'GET',
    url: '/auth/me',
    cookies: { svc_id_token: 'garbage.garbage.garbage' },
    headers: { authorization: `Bearer ${headerUser}` },
  })
  t.equal(badCookie.statusCode, 401)
  t.equal(badCookie.json().code, 'UNAUTHORIZED')
})

t.test('refresh exchanges the refresh cookie with client credentials by HTTP Basic', async (t) => {
  const refreshToken = issuer.idp.mintRefreshToken({ email: 'refresh@example.com', groups: ['Ops'] })
  const before = issuer.tokenRequestAuthorizations.length
  const response = await app.inject({ method: 'POST', url: '/auth/refresh', cookies: { svc_refresh_token: refreshToken } })
  t.equal(response.statusCode, 200)
  const idCookie = cookiesOf(response).svc_id_token
  t.ok(idCookie?.value)
  t.equal(idCookie?.maxAge, 3600)
  t.equal(idCookie?.httpOnly, true)
  const expected = `Basic ${Buffer.from(`${issuer.clientId}:app-client-secret`).toString('base64')}`
  t.same(issuer.tokenRequestAuthorizations.slice(before), [expected])
  const me = await app.inject({ method: 'GET', url: '/auth/me', cookies: { svc_id_token: idCookie?.value ?? '' } })
  t.match(me.json(), { email: 'refresh@example.com', groups: ['Ops'] })
})

t.test('an invalid_grant clears both cookies and answers 401', async (t) => {
  const response = await app.inject({ method: 'POST', url: '/auth/refresh', cookies: { svc_refresh_token: 'revoked-or-expired' } })
  t.equal(response.statusCode, 401)
  t.equal(response.json().code, 'UNAUTHORIZED')
  const cleared = cookiesOf(response)
  t.equal(cleared.svc_id_token?.value, '')
  t.equal(cleared.svc_refresh_token?.value, '')
  for (const line of rawSetCookies(response)) t.match(line, /Expires=Thu, 01 Jan 1970|Max-Age=0/)
})

t.test('refresh without a refresh cookie is 401 and calls nobody', async (t) => {
  const before = issuer.tokenRequestAuthorizations.length
  const response = await app.inject({ method: 'POST', url: '/auth/refresh' })
  t.equal(response.statusCode, 401)
  t.equal(issuer.tokenRequestAuthorizations.length, before)
})

t.test('logout is public and clears both cookies', async (t) => {
  const response = await app.inject({ method: 'POST', url: '/auth/logout' })
  t.equal(response.statusCode, 204)
  const cleared = cookiesOf(response)
  t.equal(cleared.svc_id_token?.value, '')
  t.equal(cleared.svc_refresh_token?.value, '')
  t.equal(cleared.svc_id_token?.domain, 'example.com')
  t.equal(cleared.svc_id_token?.path, '/')
  const refreshPaths = rawSetCookies(response)
    .filter((line) => line.startsWith('svc_refresh_token='))
    .map((line) => /Path=([^;]+)/.exec(line)?.[1])
  t.same(refreshPaths.sort(), ['/', '/auth'], 'cleared where it lives now and where it lived before')
})

t.test('refresh has its own small limit per client address', async (t) => {
  const limited = await startTestService(t, buildApp, { issuer })
  const statuses: number[] = []
  for (let attempt = 0; attempt < 11; attempt += 1)
    statuses.push((await limited.app.inject({ method: 'POST', url: '/auth/refresh' })).statusCode)
  t.same(statuses, [...Array(10).fill(401), 429])
  t.equal(
    (
      await limited.app.inject({
        method: 'GET',
        url: '/auth/me',
        headers: { authorization: `Bearer ${limited.token('other@example.com')}` },
      })
    ).statusCode,
    200,
    'other routes keep the service limit',
  )
})

t.test('cookie-authenticated changes from a foreign origin are refused', async (t) => {
  const token = service.token('csrf@example.com')
  const patch = (headers: Record<string, string>, cookies?: Record<string, string>) =>
    app.inject({ method: 'PATCH', url: '/api/v1/users/me', headers, cookies, payload: { displayName: 'Changed' } })

  const foreign = await patch({ origin: 'https://evil.example.com' }, { svc_id_token: token })
  t.equal(foreign.statusCode, 403)
  t.equal(foreign.json().code, 'FORBIDDEN')
  const sibling = await patch({ origin: 'https://blog.example.com' }, { svc_id_token: token })
  t.equal(sibling.statusCode, 403, 'a sibling subdomain is same-site but not allowed')
  const me = await app.inject({ method: 'GET', url: '/auth/me', cookies: { svc_id_token: token } })
  const row = await app.database.db
    .selectFrom('core.users')
    .select('displayName')
    .where('id', '=', me.json().userId)
    .executeTakeFirstOrThrow()
  t.equal(row.displayName, null, 'nothing changed')

  t.equal((await patch({ origin: 'https://app.example.com' }, { svc_id_token: token })).statusCode, 200)
  t.equal((await patch({}, { svc_id_token: token })).statusCode, 200, 'no Origin header: not a browser')
  t.equal(
    (await patch({ origin: 'https://evil.example.com', authorization: `Bearer ${token}` })).statusCode,
    200,
    'a Bearer token is not sent by the browser on its own',
  )
  const setCookie = await app.inject({
    method: 'POST',
    url: '/auth/set-cookie',
    headers: { origin: 'https://evil.example.com' },
    payload: { idToken: token },
  })
  t.equal(setCookie.statusCode, 403, 'login CSRF: a foreign page cannot plant a session')
})

t.test('with AUTH_REVOKE_URL, logout revokes the refresh token at the identity provider', async (t) => {
  const revoking = await startTestService(t, buildApp, {
    issuer,
    config: {
      auth: {
        issuer: issuer.issuer,
        jwksUrl: issuer.jwksUrl,
        clientIds: [issuer.clientId],
        clientSecret: 'app-client-secret',
        tokenUrl: issuer.tokenUrl,
        revokeUrl: `${issuer.issuer}/oauth2/revoke`,
        groupsClaim: 'cognito:groups',
      },
    },
  })
  const refreshToken = issuer.idp.mintRefreshToken({ email: 'leaving@example.com' })
  t.equal(
    (await revoking.app.inject({ method: 'POST', url: '/auth/refresh', cookies: { svc_refresh_token: refreshToken } })).statusCode,
    200,
    'it works before',
  )
  const logout = await revoking.app.inject({ method: 'POST', url: '/auth/logout', cookies: { svc_refresh_token: refreshToken } })
  t.equal(logout.statusCode, 204)
  t.equal(issuer.idp.redeemRefreshToken(refreshToken), undefined, 'the provider no longer honours it')
  t.equal(
    (await revoking.app.inject({ method: 'POST', url: '/auth/refresh', cookies: { svc_refresh_token: refreshToken } })).statusCode,
    401,
  )
})

t.test('a provider that cannot revoke does not stop the logout', async (t) => {
  const unreachable = await startTestService(t, buildApp, {
    issuer,
    config: {
      auth: {
        issuer: issuer.issuer,
        jwksUrl: issuer.jwksUrl,
        clientIds: [issuer.clientId],
        tokenUrl: issuer.tokenUrl,
        revokeUrl: 'http://127.0.0.1:9/oauth2/revoke',
        groupsClaim: 'cognito:groups',
      },
    },
  })
  const logout = await unreachable.app.inject({ method: 'POST', url: '/auth/logout', cookies: { svc_refresh_token: 'any' } })
  t.equal(logout.statusCode, 204)
  t.equal(cookiesOf(logout).svc_refresh_token?.value, '')
})
