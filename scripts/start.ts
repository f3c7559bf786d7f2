// `pnpm start`: the embedded default. Both services in one process on one embedded
// PostgreSQL (PGlite under DATA_DIR, or DATABASE_URL when set), with the development
// identity provider unless AUTH_ISSUER names a real one.
import { authConfigFor, authConfigFromEnvironment, readEnvironment, serviceConfigFor } from '@svc/config'
import { buildDevIdentityProviderServer } from '@svc/dev-idp'
import { buildApp as buildPlatform } from '@svc/platform'
import { buildApp as buildProduct } from '@svc/product'
import { exitOnConfigurationError, openResources, serve } from '@svc/runtime'
import { DEV_CLIENT_ID, devIssuer, openDevIdentityProvider } from './embedded-identity.js'
import { embeddedReportsSigningKey, embeddedSecretsKey } from './embedded-secrets-key.js'

const env = exitOnConfigurationError(() => readEnvironment())
const useDevIdentityProvider = !env.AUTH_ISSUER
const auth = exitOnConfigurationError(() =>
  useDevIdentityProvider ? authConfigFor(env, devIssuer(env), [DEV_CLIENT_ID]) : authConfigFromEnvironment(env),
)
const base = serviceConfigFor(env, auth)
const config = {
  ...base,
  synthetics: { ...base.synthetics!, secretsKey: await embeddedSecretsKey(env) },
  reportsSigningKey: await embeddedReportsSigningKey(env),
}

const resources = await openResources(config)
const apps = [
  { app: await buildPlatform(config, resources), port: env.PLATFORM_PORT },
  { app: await buildProduct(config, resources), port: env.PRODUCT_PORT },
]
if (useDevIdentityProvider) {
  const idp = await buildDevIdentityProviderServer(await openDevIdentityProvider(env))
  // Loopback only: it signs tokens for anyone who asks for a refresh.
  await idp.listen({ port: env.DEV_IDP_PORT, host: '127.0.0.1' })
  apps[0]?.app.addHook('onClose', async () => idp.close())
}
await serve(apps, { host: config.host, metricsPort: config.metricsPort, afterClose: () => resources.close() })
const where = resources.database.kind === 'pglite' ? `embedded PostgreSQL in ${env.DATA_DIR}` : 'PostgreSQL at DATABASE_URL'
apps[0]?.app.log.info(
  `platform API on :${env.PLATFORM_PORT}, product API on :${env.PRODUCT_PORT}, ${where}` +
    (useDevIdentityProvider ? `, development identity provider at ${devIssuer(env)} (pnpm token <email>)` : ''),
)
