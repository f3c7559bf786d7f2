import t from 'tap'
import { createVerifier } from 'fast-jwt'
import { startTestIssuer } from '@svc/testkit'

const issuer = await startTestIssuer(t)
const base = issuer.issuer

t.test('it publishes an OIDC discovery document and its JWKS', async (t) => {
  const discovery = await (await fetch(`${base}/.well-known/openid-configuration`)).json()
  t.match(discovery, {
    issuer: base,
    jwks_uri: `${base}/.well-known/jwks.json`,
    token_endpoint: `${base}/oauth2/token`,
    id_token_signing_alg_values_supported: ['RS256'],
  })
  const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, unknown>> }
  t.equal(jwks.keys.length, 1)
  t.match(jwks.keys[0], { kty: 'RSA', alg: 'RS256', use: 'sig', kid: issuer.idp.key.kid })
  t.notOk('d' in (jwks.keys[0] ?? {}), 'no private parts')
})

t.test('its ID tokens are shaped like a Cognito user pool’s', async (t) => {
  const token = issuer.idp.mintIdToken({ email: 'shape@example.com', groups: ['PlatformAdmins'] })
  const verify = createVerifier({ key: issuer.idp.key.publicKeyPem, algorithms: ['RS256'], complete: true })
  const { header, payload } = verify(token) as { header: Record<string, unknown>; payload: Record<string, unknown> }
  t.match(header, { alg: 'RS256', kid: issuer.idp.key.kid })
  t.match(payload, { email: 'shape@example.com', 'cognito:groups': ['PlatformAdmins'], token_use: 'id', aud: issuer.clientId, iss: base })
  t.equal(Number(payload.exp) - Number(payload.iat), 3600)
})

t.test('the token endpoint exchanges refresh tokens and refuses anything else', async (t) => {
  const post = (form: Record<string, string>) =>
    fetch(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    })
  const refreshToken = issuer.idp.mintRefreshToken({ email: 'refresh@example.com' })
  const ok = await post({ grant_type: 'refresh_token', refresh_token: refreshToken })
  t.equal(ok.status, 200)
  t.match(await ok.json(), { token_type: 'Bearer', expires_in: 3600, id_token: /^ey/ })

  const idTokenAsRefresh = await post({ grant_type: 'refresh_token', refresh_token: issuer.idp.mintIdToken({ email: 'x@example.com' }) })
  t.equal(idTokenAsRefresh.status, 400)
  t.same(await idTokenAsRefresh.json(), { error: 'invalid_grant', error_description: 'Invalid Refresh Token' })
  const wrongGrant = await post({ grant_type: 'password' })
  t.same(await wrongGrant.json(), { error: 'unsupported_grant_type' })
})

t.test('a client secret, when configured, is required by HTTP Basic', async (t) => {
  const guarded = await startTestIssuer(t, { clientSecret: 's3cret' })
  const refreshToken = guarded.idp.mintRefreshToken({ email: 'basic@example.com' })
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken })
  const without = await fetch(guarded.tokenUrl, { method: 'POST', body })
  t.equal(without.status, 401)
  t.same(await without.json(), { error: 'invalid_client' })
  const basic = `Basic ${Buffer.from(`${guarded.clientId}:s3cret`).toString('base64')}`
  const withSecret = await fetch(guarded.tokenUrl, { method: 'POST', body, headers: { authorization: basic } })
  t.equal(withSecret.status, 200)
})
