import { readFileSync } from 'node:fs'
import t from 'tap'
import { DOMParser } from '@xmldom/xmldom'
import { acceptInvitationOf, startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'

const fixture = (name: string) => readFileSync(new URL(`fixtures/saml/${name}`, import.meta.url), 'utf8')
const signingPem = fixture('idp-signing.pem')
const expiredPem = fixture('idp-expired.pem')
const base64Of = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '')

/** Metadata shaped like what Okta exports for a SAML app. */
function oktaMetadata(certificate = base64Of(signingPem), ssoUrl = 'https://acme.okta.example/app/acme_incidents/exk1/sso/saml') {
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="http://www.okta.com/exk1">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing">
      <ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${certificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>
    </md:KeyDescriptor>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ssoUrl}/post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${ssoUrl}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`
}

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const owner = await service.signIn('owner@sso.example')
const member = await service.signIn('member@sso.example')
const { id: orgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'SSO', slug: 'sso' } })
).json()
await app.inject({
  method: 'POST',
  url: `/api/v1/organizations/${orgId}/members`,
  headers: owner.headers,
  payload: { email: member.email, role: 'member' },
})
await acceptInvitationOf(app, member)
const ssoUrl = `/api/v1/organizations/${orgId}/sso`
const configure = (payload: unknown, headers = owner.headers) =>
  app.inject({ method: 'POST', url: ssoUrl, headers, payload: payload as Record<string, unknown> })
const stored = () => db.selectFrom('core.ssoConfigs').selectAll().where('organizationId', '=', orgId).executeTakeFirst()

t.test('before configuration, the status says so and names this service provider', async (t) => {
  const response = await app.inject({ method: 'GET', url: ssoUrl, headers: owner.headers })
  t.equal(response.statusCode, 200)
  t.match(response.json(), {
    configured: false,
    identityProvider: null,
    allowedDomains: [],
    serviceProvider: {
      entityId: `http://localhost:80${ssoUrl}/metadata`,
      acsUrl: `http://localhost:80${ssoUrl}/acs`,
      nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    },
  })
})

t.test("configuring from the identity provider's metadata", async (t) => {
  const response = await configure({ metadataXml: oktaMetadata(), allowedDomains: ['SSO.example', 'sso.example', 'corp.sso.example'] })
  t.equal(response.statusCode, 200)
  const status = response.json()
  t.match(status, {
    configured: true,
    identityProvider: {
      entityId: 'http://www.okta.com/exk1',
      ssoUrl: 'https://acme.okta.example/app/acme_incidents/exk1/sso/saml',
      certificate: { subject: 'CN=idp.example', notAfter: '2126-01-01T00:00:00.000Z' },
    },
    allowedDomains: ['sso.example', 'corp.sso.example'],
  })
  t.match(status.identityProvider.certificate.fingerprintSha256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/)
  const row = await stored()
  t.match(row, { idpEntityId: 'http://www.okta.com/exk1', createdBy: owner.userId })
  t.match(row?.idpCertificate, /^-----BEGIN CERTIFICATE-----/)
  t.ok(row?.idpMetadataXml?.includes('EntityDescriptor'))
  t.same((await app.inject({ method: 'GET', url: ssoUrl, headers: owner.headers })).json(), status)
})

t.test('configuring from entity id, SSO URL and certificate replaces it', async (t) => {
  const response = await configure({
    entityId: 'https://sts.windows.example/tenant/',
    ssoUrl: 'https://login.microsoftonline.example/tenant/saml2',
    certificate: signingPem,
  })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { identityProvider: { entityId: 'https://sts.windows.example/tenant/' }, allowedDomains: [] })
  t.equal((await stored())?.idpMetadataXml, null)
  const actions = await db
    .selectFrom('core.auditLogs')
    .select('action')
    .where('entityType', '=', 'sso_config')
    .orderBy('createdAt')
    .execute()
  t.same(
    actions.map((entry) => entry.action),
    ['sso.configured', 'sso.updated'],
  )
})

t.test('what cannot be used is a clear 400 and changes nothing', async (t) => {
  const before = await stored()
  const cases: Array<[string, unknown, RegExp]> = [
    ['malformed XML', { metadataXml: '<md:EntityDescriptor' }, /metadataXml is not well-formed XML/],
    ['not SAML metadata', { metadataXml: '<html><body>login</body></html>' }, /EntityDescriptor/],
    ['no identity provider', { metadataXml: oktaMetadata().replaceAll('IDPSSODescriptor', 'SPSSODescriptor') }, /IDPSSODescriptor/],
    ['no sign-on URL', { metadataXml: oktaMetadata().replaceAll('SingleSignOnService', 'SingleLogoutService') }, /SingleSignOnService/],
    ['no certificate', { metadataXml: oktaMetadata().replace(/<md:KeyDescriptor[\s\S]*<\/md:KeyDescriptor>/, '') }, /signing certificate/],
    ['an expired certificate in the metadata', { metadataXml: oktaMetadata(base64Of(expiredPem)) }, /metadataXml expired on 2021-01-01/],
    ['a certificate that is not one', { metadataXml: oktaMetadata('bm90IGEgY2VydGlmaWNhdGU=') }, /not a valid X.509 certificate/],
    ['an expired certificate', { entityId: 'x', ssoUrl: 'https://idp.example/sso', certificate: expiredPem }, /certificate expired/],
    [
      'garbage for a certificate',
      { entityId: 'x', ssoUrl: 'https://idp.example/sso', certificate: 'hello' },
      /certificate is not a valid X.509/,
    ],
    ['a plain-http sign-on URL', { entityId: 'x', ssoUrl: 'http://idp.example/sso', certificate: signingPem }, /ssoUrl must give an https/],
    ['a missing field', { entityId: 'x', certificate: signingPem }, /ssoUrl is required/],
    ['both ways at once', { metadataXml: oktaMetadata(), entityId: 'x' }, /comes alone/],
    ['a bad domain', { metadataXml: oktaMetadata(), allowedDomains: ['not a domain'] }, /allowedDomains/],
    ['an unknown field', { metadataXml: oktaMetadata(), signAssertions: true }, /./],
  ]
  for (const [what, payload, message] of cases) {
    const response = await configure(payload)
    t.equal(response.statusCode, 400, what)
    t.match(response.json(), { code: 'VALIDATION_FAILED', message }, what)
  }
  t.same(await stored(), before)
})

t.test('only admins and owners of this organization see or change SSO', async (t) => {
  t.equal((await app.inject({ method: 'GET', url: ssoUrl, headers: member.headers })).statusCode, 403)
  t.equal((await configure({ metadataXml: oktaMetadata() }, member.headers)).statusCode, 403)
  t.equal((await app.inject({ method: 'DELETE', url: ssoUrl, headers: member.headers })).statusCode, 403)
  const stranger = await service.signIn('stranger@elsewhere.example')
  t.equal((await app.inject({ method: 'GET', url: ssoUrl, headers: stranger.headers })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: ssoUrl })).statusCode, 401)
})

t.test('the service-provider metadata is public XML an identity provider imports', async (t) => {
  const response = await app.inject({ method: 'GET', url: `${ssoUrl}/metadata` })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/samlmetadata\+xml/)
  const document = new DOMParser().parseFromString(response.body, 'text/xml')
  const root = document.documentElement
  t.equal(root?.localName, 'EntityDescriptor')
  t.equal(root?.getAttribute('entityID'), `http://localhost:80${ssoUrl}/metadata`)
  const acs = root?.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'AssertionConsumerService')[0]
  t.equal(acs?.getAttribute('Location'), `http://localhost:80${ssoUrl}/acs`)
  t.equal(acs?.getAttribute('Binding'), 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST')
  t.equal(
    root?.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'NameIDFormat')[0]?.textContent,
    'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  )
  t.equal(
    root?.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'SPSSODescriptor')[0]?.getAttribute('WantAssertionsSigned'),
    'true',
  )
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/organizations/00000000-0000-4000-8000-000000000000/sso/metadata' })).statusCode,
    404,
  )
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/organizations/not-an-id/sso/metadata' })).statusCode, 404)
})

t.test('removing SSO', async (t) => {
  t.equal((await app.inject({ method: 'DELETE', url: ssoUrl, headers: owner.headers })).statusCode, 204)
  t.equal(await stored(), undefined)
  t.match((await app.inject({ method: 'GET', url: ssoUrl, headers: owner.headers })).json(), { configured: false })
  t.equal((await app.inject({ method: 'DELETE', url: ssoUrl, headers: owner.headers })).statusCode, 404)
  const actions = await db
    .selectFrom('core.auditLogs')
    .select('action')
    .where('entityType', '=', 'sso_config')
    .orderBy('createdAt')
    .execute()
  t.same(
    actions.map((entry) => entry.action),
    ['sso.configured', 'sso.updated', 'sso.removed'],
  )
})
