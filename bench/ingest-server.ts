// The servers `pnpm bench:ingest` and `pnpm bench:peers` measure, in a process of their own: a
// bare Fastify that parses a JSON body and answers 202, the floor of durable ingestion (a bare
// Fastify committing each body to PostgreSQL), and the product API on a fresh PostgreSQL
// database with one organization and two signed webhook configs (generic and Alertmanager). Prints one JSON line when ready; on SIGTERM
// prints the number of alerts stored, then drops the database.
import Fastify from 'fastify'
import { sql } from 'kysely'
import { createGroupCommit } from '@svc/db'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
import { createBenchDatabase } from './database.js'
import { footprintOf } from './footprint.js'

const teardowns: Array<() => unknown> = []
const database = await createBenchDatabase('bench_ingest')

const bare = Fastify()
bare.post('/ingest', async (_request, reply) => reply.code(202).send({ accepted: true }))
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' })

const issuer = await startTestIssuer({ teardown: (fn) => teardowns.push(fn) })
const config = testConfig(issuer, {
  databaseUrl: database.url,
  logLevel: 'warn',
  rateLimit: { max: 1_000_000_000, timeWindow: '1 minute', ingestPerConfig: 1_000_000_000 },
})
const resources = await openResources(config)
const product = await buildApp(config, resources)
const productAddress = await product.listen({ port: 0, host: '127.0.0.1' })

const db = resources.database.db

// The floor of durable ingestion on this machine: what no durable ingestion can do without. Each
// body is read, checked to be JSON and committed as it came to a table with a primary key only,
// in group commits as ours are (one batch in flight, one statement per batch), before the 202.
await sql`create table bench_floor (id bigint generated always as identity primary key, body text not null)`.execute(db)
const floorWrites = createGroupCommit<string, void>({
  writeBatch: async (bodies) => {
    await sql`insert into bench_floor (body) select unnest(${bodies}::text[])`.execute(db)
    return bodies.map(() => undefined)
  },
  writeOne: async (body) => {
    await sql`insert into bench_floor (body) values (${body})`.execute(db)
  },
  maxBatch: 200,
})
const floor = Fastify()
floor.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body))
floor.post('/ingest', async (request, reply) => {
  const body = request.body as string
  JSON.parse(body)
  await floorWrites.write(body)
  return reply.code(202).send({ accepted: true })
})
const floorAddress = await floor.listen({ port: 0, host: '127.0.0.1' })
const token = issuer.idp.mintIdToken({ email: 'bench@ingest.example' })
const { userId } = (await product.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } })).json() as {
  userId: string
}
const organization = await db
  .insertInto('core.organizations')
  .values({ name: 'Bench', slug: 'bench-ingest' })
  .returning('id')
  .executeTakeFirstOrThrow()
await db.insertInto('core.organizationMembers').values({ organizationId: organization.id, userId, role: 'owner' }).execute()
const created = await product.inject({
  method: 'POST',
  url: `/api/v1/organizations/${organization.id}/webhooks`,
  headers: { authorization: `Bearer ${token}` },
  payload: { name: 'Bench', format: 'generic', signed: true },
})
const webhook = created.json() as { ingestPath: string; signingSecret: string }
// The same, for Alertmanager's webhook payload (`pnpm bench:peers` sends both formats).
const alertmanager = (
  await product.inject({
    method: 'POST',
    url: `/api/v1/organizations/${organization.id}/webhooks`,
    headers: { authorization: `Bearer ${token}` },
    payload: { name: 'Bench Alertmanager', format: 'alertmanager', signed: true },
  })
).json() as { ingestPath: string; signingSecret: string }

console.log(
  JSON.stringify({
    bare: `${bareAddress}/ingest`,
    floor: `${floorAddress}/ingest`,
    ingest: `${productAddress}${webhook.ingestPath}`,
    secret: webhook.signingSecret,
    alertmanagerIngest: `${productAddress}${alertmanager.ingestPath}`,
    alertmanagerSecret: alertmanager.signingSecret,
    database: new URL(database.url).pathname.slice(1),
  }),
)

process.once('SIGTERM', async () => {
  const { alerts } = await db
    .selectFrom('divinux.alerts')
    .select((eb) => eb.fn.countAll<number>().as('alerts'))
    .where('organizationId', '=', organization.id)
    .executeTakeFirstOrThrow()
  const footprint = await footprintOf(db, [
    'divinux.alerts',
    'divinux.alert_events',
    'divinux.webhook_deliveries',
    'divinux.alert_escalations',
  ])
  console.log(JSON.stringify({ alerts: Number(alerts), footprint }))
  await Promise.all([bare.close(), floor.close(), product.close()])
  await resources.close()
  for (const teardown of teardowns) await teardown()
  await database.drop()
  process.exit(0)
})
