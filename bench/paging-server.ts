// The service `pnpm bench:paging` measures, in a process of its own: the product API on a fresh
// PostgreSQL database with one organization, one user, a one-step escalation policy paging that
// user by e-mail (SMTP_URL, the load process's SMTP server) and a Slack-format chat webhook (the
// load process's receiver), and a signed webhook config escalating with it. `pnpm bench:correlation`
// also gives it a service dependency map (BENCH_DEPENDENCIES, JSON pairs [service, dependsOn]).
// Prints one JSON line when ready (with the database, so the load process can read what was
// grouped); on SIGTERM drops the database.
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
import { createBenchDatabase } from './database.js'

const smtpUrl = process.env.BENCH_SMTP_URL
const chatUrl = process.env.BENCH_CHAT_URL
if (!smtpUrl || !chatUrl) throw new Error('BENCH_SMTP_URL and BENCH_CHAT_URL are set by bench/paging.ts')

const teardowns: Array<() => unknown> = []
const database = await createBenchDatabase('bench_paging')
const issuer = await startTestIssuer({ teardown: (fn) => teardowns.push(fn) })
const config = testConfig(issuer, {
  databaseUrl: database.url,
  logLevel: 'warn',
  rateLimit: { max: 1_000_000_000, timeWindow: '1 minute', ingestPerConfig: 1_000_000_000 },
  notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl },
  outbound: { allowPrivateTargets: true },
})
const resources = await openResources(config)
const product = await buildApp(config, resources)
const address = await product.listen({ port: 0, host: '127.0.0.1' })
const db = resources.database.db

const token = issuer.idp.mintIdToken({ email: 'oncall@paging.example' })
const headers = { authorization: `Bearer ${token}` }
const { userId } = (await product.inject({ method: 'GET', url: '/auth/me', headers })).json() as { userId: string }
const organization = await db
  .insertInto('core.organizations')
  .values({ name: 'Bench', slug: 'bench-paging' })
  .returning('id')
  .executeTakeFirstOrThrow()
await db.insertInto('core.organizationMembers').values({ organizationId: organization.id, userId, role: 'owner' }).execute()
const api = async (url: string, payload: object, method: 'POST' | 'PATCH' = 'POST') => {
  const response = await product.inject({ method, url, headers, payload })
  if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json() as Record<string, string>
}
const base = `/api/v1/organizations/${organization.id}`
await api('/api/v1/users/me/notifications', { priorities: { P3: ['email'] } }, 'PATCH')
const chat = await api(`${base}/chat-integrations`, { name: 'Incidents', kind: 'slack', webhookUrl: chatUrl })
const policy = await api(`${base}/escalation-policies`, {
  name: 'On call',
  steps: [
    {
      delayMinutes: 30,
      targets: [
        { type: 'user', id: userId },
        { type: 'chat', id: chat.id },
      ],
    },
  ],
})
const webhook = await api(`${base}/webhooks`, { name: 'Bench', format: 'generic', signed: true, escalationPolicyId: policy.id })
const dependencies = JSON.parse(process.env.BENCH_DEPENDENCIES ?? '[]') as Array<[string, string]>
for (const [service, dependsOn] of dependencies) await api(`${base}/service-dependencies`, { service, dependsOn })

console.log(
  JSON.stringify({
    ingest: `${address}${webhook.ingestPath}`,
    secret: webhook.signingSecret,
    databaseUrl: database.url,
    organizationId: organization.id,
  }),
)

process.once('SIGTERM', async () => {
  await product.close()
  await resources.close()
  for (const teardown of teardowns) await teardown()
  await database.drop()
  process.exit(0)
})
