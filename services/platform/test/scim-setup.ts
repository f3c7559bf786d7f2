import type { TestContext } from '@svc/testkit'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'

export const SCIM = '/api/v1/scim/v2'

/**
 * A platform service with one organization (its owner signed in) and a SCIM token for it, the
 * way an administrator sets up an identity provider.
 */
export async function scimOrganization(t: TestContext, slug = 'acme', ownerEmail = `owner@${slug}.example`) {
  const service = await startTestService(t, buildApp)
  const { app } = service
  const owner = await service.signIn(ownerEmail)
  const organization = (
    await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: slug, slug } })
  ).json() as { id: string }
  const token = await createScimToken(service.app, organization.id, owner.headers)
  return { service, app, db: app.database.db, owner, orgId: organization.id, token, scim: { authorization: `Bearer ${token}` } }
}

export async function createScimToken(
  app: Awaited<ReturnType<typeof startTestService>>['app'],
  orgId: string,
  headers: { authorization: string },
): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/scim-tokens`,
    headers,
    payload: { name: 'identity provider' },
  })
  if (response.statusCode !== 201) throw new Error(`SCIM token not created: ${response.body}`)
  return (response.json() as { token: string }).token
}
