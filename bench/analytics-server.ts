// The servers `pnpm bench:analytics` measures, in a process of their own: a bare Fastify that
// parses a JSON body and answers 200, and the platform API on a fresh PostgreSQL database with
// one member's organization. Prints one JSON line when ready; on SIGTERM drops the database.
import Fastify from 'fastify'
import { buildApp } from '@svc/platform'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
import { createBenchDatabase } from './database.js'

const teardowns: Array<() => unknown> = []
const database = await createBenchDatabase('bench_analytics')

const bare = Fastify({ bodyLimit: 1_048_576 })
bare.post('/batch', async () => ({ accepted: true }))
bare.get('/summary', async () => ({ data: [] }))
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' })

const issuer = await startTestIssuer({ teardown: (fn) => teardowns.push(fn) })
const config = testConfig(issuer, {
  databaseUrl: database.url,
  logLevel: 'warn',
  rateLimit: { max: 1_000_000_000, timeWindow: '1 minute' },
})
const resources = await openResources(config)
const platform = await buildApp(config, resources)
const platformAddress = await platform.listen({ port: 0, host: '127.0.0.1' })

const token = issuer.idp.mintIdToken({ email: 'bench@analytics.example' })
const created = await platform.inject({
  method: 'POST',
  url: '/api/v1/organizations',
  headers: { authorization: `Bearer ${token}` },
  payload: { name: 'Bench', slug: 'bench-analytics' },
})
const { id: organizationId } = created.json() as { id: string }

console.log(JSON.stringify({ bare: bareAddress, platform: platformAddress, organizationId, token, databaseUrl: database.url }))

process.once('SIGTERM', async () => {
  await Promise.all([bare.close(), platform.close()])
  await resources.close()
  for (const teardown of teardowns) await teardown()
  await database.drop()
  process.exit(0)
})
