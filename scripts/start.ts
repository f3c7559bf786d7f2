// `pnpm start`: the embedded default. Both services in one process on one embedded
// PostgreSQL (PGlite under DATA_DIR, or DATABASE_URL when set), with the development
// identity provider unless AUTH_ISSUER names a real one.
import { authConfigFor, authConfigFromEnvironment, readEnvironment, serviceConfigFor } from '@svc/config'
import { buildDevIdentityProviderServer } from '@svc/dev-idp'
import { buildApp as buildPlatform } from '@svc/platform'
import { buildApp as buildProduct } from '@svc/product'
import {
  DEV_OUTBOX_PATH,
  busyPortsMessage,
  devOutboxRoutes,
  exitOnConfigurationError,
  openResources,
  serve,
  type NamedPort,
} from '@svc/runtime'
import { announceDevSystem } from './dev-system.js'
import { DEV_CLIENT_ID, devIssuer, openDevIdentityProvider } from './embedded-identity.js'
import { embeddedReportsSigningKey, embeddedSecretsKey } from './embedded-secrets-key.js'

const env = exitOnConfigurationError(() => readEnvironment())
const useDevIdentityProvider = !env.AUTH_ISSUER
const auth = exitOnConfigurationError(() =>
  useDevIdentityProvider ? authConfigFor(env, devIssuer(env), [DEV_CLIENT_ID]) : authConfigFromEnvironment(env),
)
const base = serviceConfigFor(env, auth)
// A newcomer's first check and first webhook point at their own machine: here, unlike a service
// on its own (production), private and loopback targets are allowed unless ALLOW_PRIVATE_TARGETS
// says otherwise.
const allowPrivateTargets = process.env.ALLOW_PRIVATE_TARGETS ? env.ALLOW_PRIVATE_TARGETS : true
// What would be sent without a provider is captured here, where a newcomer can read it, rather
// than held as if paging were broken (CATCH_MESSAGES=false holds it, as a service on its own does).
const catchMessages = env.CATCH_MESSAGES ?? true
const outboxPage = `http://localhost:${env.PLATFORM_PORT}${DEV_OUTBOX_PATH}`
const config = {
  ...base,
  outbound: { ...base.outbound!, allowPrivateTargets },
  notifier: {
    ...base.notifier!,
    catchMessages,
    capturedAt: outboxPage,
    ...(base.notifier?.webPush ? { webPush: { ...base.notifier.webPush, allowPrivateTargets } } : {}),
  },
  synthetics: { ...base.synthetics!, secretsKey: await embeddedSecretsKey(env) },
  reportsSigningKey: await embeddedReportsSigningKey(env),
}

const ports: NamedPort[] = [
  { port: env.PLATFORM_PORT, variable: 'PLATFORM_PORT' },
  { port: env.PRODUCT_PORT, variable: 'PRODUCT_PORT' },
  ...(config.metricsPort === undefined ? [] : [{ port: config.metricsPort, variable: 'METRICS_PORT' }]),
]
const busy =
  (await busyPortsMessage(ports, config.host)) ??
  (useDevIdentityProvider ? await busyPortsMessage([{ port: env.DEV_IDP_PORT, variable: 'DEV_IDP_PORT' }], '127.0.0.1') : undefined)
if (busy) {
  console.error(busy)
  process.exit(1)
}

const where = env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : `the embedded PostgreSQL in ${env.DATA_DIR}`
const opening = Date.now()
console.log(`Opening ${where} and bringing it up to date (the first start migrates it: about 30 seconds)…`)
const resources = await openResources(config)
console.log(`Database ready in ${((Date.now() - opening) / 1000).toFixed(1)} s.`)
const apps = [
  { app: await buildPlatform(config, resources), port: env.PLATFORM_PORT },
  { app: await buildProduct(config, resources), port: env.PRODUCT_PORT },
]
await apps[0]?.app.register(devOutboxRoutes, { db: resources.database.db })
if (useDevIdentityProvider) {
  const idp = await buildDevIdentityProviderServer(await openDevIdentityProvider(env))
  // Loopback only: it signs tokens for anyone who asks for a refresh.
  await idp.listen({ port: env.DEV_IDP_PORT, host: '127.0.0.1' })
  apps[0]?.app.addHook('onClose', async () => idp.close())
}
let withdraw = async () => {}
await serve(apps, {
  host: config.host,
  metricsPort: config.metricsPort,
  afterClose: async () => {
    await withdraw()
    await resources.close()
  },
})
withdraw = await announceDevSystem(env)
const local = (port: number) => `http://localhost:${port}`
console.log(
  [
    '',
    'The incident platform is running:',
    `  platform API   ${local(env.PLATFORM_PORT)}   reference ${local(env.PLATFORM_PORT)}/docs`,
    `  product API    ${local(env.PRODUCT_PORT)}   reference ${local(env.PRODUCT_PORT)}/docs`,
    useDevIdentityProvider
      ? `  identity       ${devIssuer(env)} (development provider: a token with \`pnpm token you@example.com\`)`
      : `  identity       ${auth.issuer}`,
    `  data           ${where}`,
    `  messages       ${outboxPage} (or \`pnpm outbox\`)${catchMessages ? ': without a provider they are captured here, never sent' : ''}`,
    ...(allowPrivateTargets
      ? ['  outbound       checks and webhooks may target this machine and private networks (ALLOW_PRIVATE_TARGETS=false refuses them)']
      : []),
    '',
  ].join('\n'),
)
