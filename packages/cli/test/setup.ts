import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { DEFAULT_SYNTHETICS_CONFIG } from '@svc/config'
import { buildApp as buildPlatform } from '@svc/platform'
import { buildApp as buildProduct } from '@svc/product'
import { acceptInvitationOf, startTestService, until, type SignedIn } from '@svc/testkit'

/** One deployment of the two services over real HTTP, as staging or production would be. */
export async function startSystem(t: Test) {
  // Chat and webhook targets on loopback: the tests' targets never resolve from here otherwise.
  // Trackers' credentials are sealed with the secrets key, as check secrets are.
  const service = await startTestService(t, buildPlatform, {
    config: {
      outbound: { allowPrivateTargets: true },
      synthetics: { ...DEFAULT_SYNTHETICS_CONFIG, secretsKey: randomBytes(32).toString('base64') },
    },
  })
  const product = await buildProduct(service.config, service.resources)
  t.teardown(() => product.close())
  const productUrl = await product.listen({ port: 0, host: '127.0.0.1' })
  return { platform: service.app, product, productUrl, signIn: (email: string) => service.signIn(email) }
}
export type System = Awaited<ReturnType<typeof startSystem>>

async function send(
  app: FastifyInstance,
  who: SignedIn,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
) {
  const response = await app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
  return response.body ? (response.json() as Record<string, unknown> & { id: string }) : ({} as Record<string, unknown> & { id: string })
}

/**
 * An organization owned by alice with bob a member (invited, accepting), and an API token of
 * alice's with every product's admin role: what a CI job of the organization holds.
 */
export async function organization(system: System, slug: string) {
  const alice = await system.signIn('alice@acme.example')
  const bob = await system.signIn('bob@acme.example')
  const { id: orgId } = await send(system.platform, alice, 'POST', '/api/v1/organizations', { name: `Acme ${slug}`, slug })
  await send(system.platform, alice, 'POST', `/api/v1/organizations/${orgId}/invitations`, {
    email: bob.email,
    role: 'member',
    productRoles: { alerting: 'responder' },
  })
  await until('the invitation e-mail', () =>
    acceptInvitationOf(system.platform, bob).then(
      () => true,
      () => false,
    ),
  )
  const admin = 'admin'
  const { token } = (await send(system.platform, alice, 'POST', `/api/v1/organizations/${orgId}/api-tokens`, {
    name: 'config as code',
    productRoles: { alerting: admin, statuspages: admin, synthetics: admin, insights: admin },
  })) as unknown as { token: string }
  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
    send(system.product, alice, method, `/api/v1${path.replace('{orgId}', orgId)}`, payload)
  return {
    orgId,
    token,
    alice,
    bob,
    call,
    env: { DIVINUX_URL: system.productUrl, DIVINUX_ORGANIZATION: orgId, DIVINUX_TOKEN: token } as Record<string, string>,
  }
}
