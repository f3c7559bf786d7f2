import type { FastifyInstance } from 'fastify'
import type { ServiceConfig } from '@svc/config'
import { openResources, type Resources } from '@svc/runtime'
import { createTestDatabase } from './database.js'
import { embeddedSnapshot } from './embedded-snapshot.js'
import { startTestIssuer, type TestIssuer } from './issuer.js'
import type { TestContext } from './teardown.js'

export type BuildApp = (config: ServiceConfig, shared?: Resources) => Promise<FastifyInstance>

export interface TestServiceOptions {
  issuer?: TestIssuer
  config?: Partial<ServiceConfig>
}

export interface TestService {
  app: FastifyInstance
  resources: Resources
  config: ServiceConfig
  issuer: TestIssuer
  /** A fresh ID token from the test issuer. */
  token(email: string, groups?: string[]): string
  /** Signs a user in (their first request creates the user row) and hands back what calls need. */
  signIn(email: string, groups?: string[]): Promise<SignedIn>
}

export interface SignedIn {
  email: string
  userId: string
  token: string
  headers: { authorization: string }
}

export function testConfig(issuer: TestIssuer, overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    dataDir: '.data/test',
    host: '127.0.0.1',
    trustProxy: false,
    auth: {
      issuer: issuer.issuer,
      jwksUrl: issuer.jwksUrl,
      clientIds: [issuer.clientId],
      tokenUrl: issuer.tokenUrl,
      groupsClaim: 'cognito:groups',
    },
    cookies: { allowedOrigins: [] },
    rateLimit: { max: 10_000, timeWindow: '1 minute' },
    logLevel: 'silent',
    ...overrides,
  }
}

/**
 * A service built the way `server.ts` builds it, on its own database (PGlite in memory, or
 * a fresh PostgreSQL database under TEST_DATABASE_URL) and trusting a loopback test issuer.
 */
export async function startTestService(t: TestContext, buildApp: BuildApp, options: TestServiceOptions = {}): Promise<TestService> {
  const issuer = options.issuer ?? (await startTestIssuer(t))
  const databaseUrl = await createTestDatabase(t)
  const config = testConfig(issuer, { databaseUrl, ...options.config })
  const seed = databaseUrl ? undefined : await embeddedSnapshot()
  const resources = await openResources(config, { inMemory: true, seed })
  // Registered before the app is built, so a build that throws still releases the database.
  t.teardown(() => resources.close())
  const app = await buildApp(config, resources)
  t.teardown(() => app.close())
  await app.ready()
  const token = (email: string, groups: string[] = []) => issuer.idp.mintIdToken({ email, groups })
  return {
    app,
    resources,
    config,
    issuer,
    token,
    async signIn(email, groups = []) {
      const idToken = token(email, groups)
      const headers = { authorization: `Bearer ${idToken}` }
      const response = await app.inject({ method: 'GET', url: '/auth/me', headers })
      if (response.statusCode !== 200) throw new Error(`sign-in of ${email} failed: ${response.body}`)
      return { email, userId: (response.json() as { userId: string }).userId, token: idToken, headers }
    },
  }
}
