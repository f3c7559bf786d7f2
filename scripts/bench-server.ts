// The servers `pnpm bench` measures, in a process of their own so the load generator does
// not share their event loop: a bare Fastify hello-world, and the platform API on an
// in-memory embedded database trusting a loopback issuer. Prints one JSON line when ready.
import Fastify from 'fastify'
import { buildApp } from '@svc/platform'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'

const teardowns: Array<() => unknown> = []
const context = { teardown: (fn: () => unknown) => teardowns.push(fn) }

const bare = Fastify()
bare.get('/hello', async () => ({ hello: 'world' }))
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' })

const issuer = await startTestIssuer(context)
// Production settings but a rate limit that a single load generator cannot reach.
const config = testConfig(issuer, { logLevel: 'warn', rateLimit: { max: 1_000_000_000, timeWindow: '1 minute' } })
const resources = await openResources(config, { inMemory: true })
const platform = await buildApp(config, resources)
const platformAddress = await platform.listen({ port: 0, host: '127.0.0.1' })

console.log(
  JSON.stringify({
    bare: `${bareAddress}/hello`,
    platform: `${platformAddress}/api/v1/users/me`,
    token: issuer.idp.mintIdToken({ email: 'bench@example.com', groups: ['Engineers'] }),
  }),
)

process.once('SIGTERM', async () => {
  await Promise.all([bare.close(), platform.close()])
  await resources.close()
  for (const teardown of teardowns) await teardown()
  process.exit(0)
})
