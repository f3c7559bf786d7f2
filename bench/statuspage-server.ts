// The servers `pnpm bench:statuspage` measures, in a process of their own: a bare Fastify that
// answers a hello-world and the page's summary exactly as the product API sends it, and the
// product API on a fresh PostgreSQL database holding a published page with 50 components (in 5
// groups), 1,000 past incidents (two updates each) and two open ones. Prints one JSON line when
// ready; on SIGTERM drops the database.
import { get } from 'node:http'
import Fastify from 'fastify'
import { sql } from 'kysely'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
import { createBenchDatabase } from './database.js'

const PAST_INCIDENTS = Number(process.env.BENCH_STATUSPAGE_INCIDENTS ?? 1000)
const teardowns: Array<() => unknown> = []
const database = await createBenchDatabase('bench_statuspage')

const issuer = await startTestIssuer({ teardown: (fn) => teardowns.push(fn) })
// Production settings but a per-address limit that one load generator cannot reach.
const config = testConfig(issuer, {
  databaseUrl: database.url,
  logLevel: 'warn',
  rateLimit: { max: 1_000_000_000, timeWindow: '1 minute' },
})
const resources = await openResources(config)
const product = await buildApp(config, resources)
const productAddress = await product.listen({ port: 0, host: '127.0.0.1' })

const db = resources.database.db
const token = issuer.idp.mintIdToken({ email: 'bench@statuspage.example' })
const headers = { authorization: `Bearer ${token}` }
const { userId } = (await product.inject({ method: 'GET', url: '/auth/me', headers })).json() as { userId: string }
const organization = await db
  .insertInto('core.organizations')
  .values({ name: 'Bench', slug: 'bench-statuspage' })
  .returning('id')
  .executeTakeFirstOrThrow()
await db.insertInto('core.organizationMembers').values({ organizationId: organization.id, userId, role: 'owner' }).execute()
const base = `/api/v1/statuspages/organizations/${organization.id}`
const post = async (url: string, payload: object) => {
  const response = await product.inject({ method: 'POST', url, headers, payload })
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json() as { id: string }
}
const page = await post(`${base}/pages`, { name: 'Bench', slug: 'bench', published: true })
const components: string[] = []
for (let group = 0; group < 5; group++) {
  const { id: groupId } = await post(`${base}/pages/${page.id}/component-groups`, { name: `Region ${group + 1}` })
  for (let index = 0; index < 10; index++) {
    components.push((await post(`${base}/pages/${page.id}/components`, { name: `Service ${group + 1}.${index + 1}`, groupId })).id)
  }
}
// The past, written directly: 1,000 resolved incidents over the last year, two updates each.
await sql`
  with past as (
    insert into divinux.status_incidents (page_id, organization_id, kind, name, status, impact, started_at, resolved_at, created_at, updated_at)
    select ${page.id}::uuid, ${organization.id}::uuid, 'incident', 'Past incident ' || n, 'resolved', (array['minor','major','critical'])[1 + n % 3],
           now() - (n || ' hours')::interval * 8, now() - (n || ' hours')::interval * 8 + interval '45 minutes',
           now() - (n || ' hours')::interval * 8, now() - (n || ' hours')::interval * 8 + interval '45 minutes'
    from generate_series(1, ${PAST_INCIDENTS}) as n
    returning id, started_at, resolved_at
  )
  insert into divinux.status_incident_updates (incident_id, status, body, display_at, created_at)
  select id, 'investigating', 'We are investigating elevated errors.', started_at, started_at from past
  union all
  select id, 'resolved', 'This incident has been resolved.', resolved_at, resolved_at from past`.execute(db)
for (const [index, componentId] of components.slice(0, 2).entries()) {
  await post(`${base}/pages/${page.id}/incidents`, {
    name: `Open incident ${index + 1}`,
    body: 'We are looking into it.',
    impact: 'minor',
    components: [{ componentId, status: 'degraded_performance' }],
  })
}
const summaryUrl = `${productAddress}/api/v1/statuspages/public/bench/api/v2/summary.json`

/** The page's answer as sent, bytes and headers, for one Accept-Encoding. */
function captured(acceptEncoding?: string): Promise<{ headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(summaryUrl, { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        // What Node writes itself on every answer is left to the bare server's Node.
        const headers = Object.fromEntries(
          Object.entries(response.headers).filter(
            (entry): entry is [string, string] =>
              typeof entry[1] === 'string' && !['date', 'connection', 'keep-alive', 'content-length'].includes(entry[0]),
          ),
        )
        resolve({ headers, body: Buffer.concat(chunks) })
      })
    }).once('error', reject)
  })
}
const [identity, gzipped] = await Promise.all([captured(), captured('gzip, deflate, br')])

// The baselines: a hello-world, and the same answer (every header and byte the page sends, for
// either encoding) from a bare Fastify, which is what serving the document costs at best.
const bare = Fastify()
bare.get('/hello', async () => ({ hello: 'world' }))
bare.get('/summary.json', async (request, reply) => {
  const answer = request.headers['accept-encoding']?.includes('gzip') ? gzipped : identity
  return reply.headers(answer.headers).send(answer.body)
})
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' })

console.log(
  JSON.stringify({
    hello: `${bareAddress}/hello`,
    bareSummary: `${bareAddress}/summary.json`,
    summary: summaryUrl,
    bytes: identity.body.length,
    gzipBytes: gzipped.body.length,
  }),
)

process.once('SIGTERM', async () => {
  await Promise.all([bare.close(), product.close()])
  await resources.close()
  for (const teardown of teardowns) await teardown()
  await database.drop()
  process.exit(0)
})
