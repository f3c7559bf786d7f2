import { X509Certificate } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { generateServiceProviderMetadata } from '@node-saml/node-saml'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { NotFoundError, Timestamp, invalidField } from '@svc/http'
import { OrgParams } from '../organizations/schemas.js'
import { deleteSsoConfig, findSsoConfig, organizationExists, saveSsoConfig, type SsoConfigRow } from '../queries/sso.js'
import { describeCertificate, readSigningCertificate } from './certificate.js'
import { readIdentityProviderMetadata } from './idp-metadata.js'

const tags = ['sso']
const NAME_ID_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'
const Domain = Type.String({
  pattern: '^(?=.{1,253}$)([a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$',
  description: 'e.g. example.com',
})

const ConfigureSso = Type.Object(
  {
    metadataXml: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500_000, description: "The identity provider's SAML 2.0 metadata XML" }),
    ),
    entityId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: "Without metadata: the identity provider's entity id" }),
    ),
    ssoUrl: Type.Optional(Type.String({ format: 'uri', maxLength: 2048, description: 'Without metadata: its single sign-on URL (https)' })),
    certificate: Type.Optional(
      Type.String({ minLength: 1, maxLength: 20_000, description: 'Without metadata: its signing certificate, PEM or base64' }),
    ),
    allowedDomains: Type.Optional(
      Type.Array(Domain, { maxItems: 100, description: 'E-mail domains that sign in through this identity provider' }),
    ),
  },
  { additionalProperties: false, description: 'Either metadataXml, or entityId, ssoUrl and certificate' },
)

const ServiceProvider = Type.Object({
  entityId: Type.String(),
  acsUrl: Type.String({ description: 'Assertion consumer service URL (HTTP-POST)' }),
  metadataUrl: Type.String(),
  nameIdFormat: Type.String(),
})

const SsoStatus = Type.Object(
  {
    configured: Type.Boolean(),
    identityProvider: Type.Union([
      Type.Object({
        entityId: Type.String(),
        ssoUrl: Type.String(),
        certificate: Type.Object({
          subject: Type.String(),
          issuer: Type.String(),
          notBefore: Timestamp,
          notAfter: Timestamp,
          fingerprintSha256: Type.String(),
        }),
      }),
      Type.Null(),
    ]),
    allowedDomains: Type.Array(Type.String()),
    serviceProvider: ServiceProvider,
    updatedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'SsoStatus' },
)

/** This service's SAML identity for one organization, under PUBLIC_PLATFORM_URL when set. */
function serviceProviderOf(request: FastifyRequest, organizationId: string) {
  const base = `${request.server.publicBaseUrl(request)}/api/v1/organizations/${organizationId}/sso`
  return { entityId: `${base}/metadata`, acsUrl: `${base}/acs`, metadataUrl: `${base}/metadata`, nameIdFormat: NAME_ID_FORMAT }
}

function statusBody(request: FastifyRequest, organizationId: string, row: SsoConfigRow | undefined) {
  const certificate = row ? describeCertificate(new X509Certificate(row.idpCertificate)) : undefined
  return {
    configured: row !== undefined,
    identityProvider:
      row && certificate
        ? {
            entityId: row.idpEntityId,
            ssoUrl: row.idpSsoUrl,
            certificate: {
              subject: certificate.subject,
              issuer: certificate.issuer,
              notBefore: certificate.notBefore.toISOString(),
              notAfter: certificate.notAfter.toISOString(),
              fingerprintSha256: certificate.fingerprintSha256,
            },
          }
        : null,
    allowedDomains: row?.allowedDomains ?? [],
    serviceProvider: serviceProviderOf(request, organizationId),
    updatedAt: row?.updatedAt.toISOString() ?? null,
  }
}

/** The identity provider's settings from its metadata, or from the three fields given instead. */
function identityProviderFrom(body: { metadataXml?: string; entityId?: string; ssoUrl?: string; certificate?: string }) {
  if (body.metadataXml !== undefined) {
    if (body.entityId !== undefined || body.ssoUrl !== undefined || body.certificate !== undefined) {
      throw invalidField('metadataXml', 'comes alone: send either the metadata or entityId, ssoUrl and certificate')
    }
    const settings = readIdentityProviderMetadata(body.metadataXml)
    return { ...settings, certificate: readSigningCertificate(settings.certificate, 'metadataXml'), metadataXml: body.metadataXml }
  }
  for (const field of ['entityId', 'ssoUrl', 'certificate'] as const) {
    if (body[field] === undefined) throw invalidField(field, 'is required without metadataXml')
  }
  return {
    entityId: body.entityId as string,
    ssoUrl: body.ssoUrl as string,
    certificate: readSigningCertificate(body.certificate as string),
    metadataXml: null,
  }
}

/** SSO/SAML configuration of an organization (spec: "SSO/SAML and SCIM tokens"). */
export const ssoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const adminOrOwner = app.requireOrgRole('admin', 'owner')

  app.get(
    '/api/v1/organizations/:orgId/sso',
    {
      schema: { tags, summary: 'SSO configuration status (admin, owner)', params: OrgParams, response: { 200: SsoStatus } },
      onRequest: adminOrOwner,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      return statusBody(request, organizationId, await findSsoConfig(db, organizationId))
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/sso',
    {
      schema: {
        tags,
        summary: 'Configure SSO/SAML (admin, owner): from the identity provider’s metadata, or its entity id, SSO URL and certificate',
        description: 'Replaces any earlier configuration. The certificate must be a valid X.509 certificate that has not expired.',
        params: OrgParams,
        body: ConfigureSso,
        response: { 200: SsoStatus },
      },
      onRequest: adminOrOwner,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const identityProvider = identityProviderFrom(request.body)
      const ssoUrl = URL.canParse(identityProvider.ssoUrl) ? new URL(identityProvider.ssoUrl) : undefined
      if (ssoUrl?.protocol !== 'https:')
        throw invalidField(request.body.metadataXml ? 'metadataXml' : 'ssoUrl', 'must give an https single sign-on URL')
      const allowedDomains = [...new Set((request.body.allowedDomains ?? []).map((domain) => domain.toLowerCase()))]
      const saved = await db.transaction().execute(async (trx) => {
        const before = await findSsoConfig(trx, organizationId)
        const row = await saveSsoConfig(trx, organizationId, request.user.userId, {
          idpEntityId: identityProvider.entityId,
          idpSsoUrl: identityProvider.ssoUrl,
          idpCertificate: identityProvider.certificate.pem,
          idpCertificateExpiresAt: identityProvider.certificate.notAfter,
          idpMetadataXml: identityProvider.metadataXml,
          allowedDomains,
        })
        const summary = (config: SsoConfigRow) => ({
          entityId: config.idpEntityId,
          ssoUrl: config.idpSsoUrl,
          certificateExpiresAt: config.idpCertificateExpiresAt,
          allowedDomains: config.allowedDomains,
        })
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'platform',
          entityType: 'sso_config',
          entityId: organizationId,
          action: before ? 'sso.updated' : 'sso.configured',
          before: before && summary(before),
          after: summary(row),
        })
        return row
      })
      return statusBody(request, organizationId, saved)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/sso',
    {
      schema: { tags, summary: 'Remove the SSO configuration (admin, owner)', params: OrgParams, response: { 204: Type.Null() } },
      onRequest: adminOrOwner,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const removed = await deleteSsoConfig(trx, organizationId)
        if (!removed) throw new NotFoundError('SSO configuration')
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'platform',
          entityType: 'sso_config',
          entityId: organizationId,
          action: 'sso.removed',
          before: { entityId: removed.idpEntityId },
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/sso/metadata',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'SAML service-provider metadata of the organization (public), for the identity provider',
        params: OrgParams,
        response: { 200: Type.String({ description: 'SAML 2.0 EntityDescriptor XML' }) },
      },
    },
    async (request, reply) => {
      const { orgId } = request.params
      if (!isUuid(orgId) || !(await organizationExists(db, orgId))) throw new NotFoundError('organization')
      const serviceProvider = serviceProviderOf(request, orgId)
      const xml = generateServiceProviderMetadata({
        issuer: serviceProvider.entityId,
        callbackUrl: serviceProvider.acsUrl,
        identifierFormat: serviceProvider.nameIdFormat,
        wantAssertionsSigned: true,
      })
      return reply.type('application/samlmetadata+xml; charset=utf-8').send(xml)
    },
  )
}
