import pg from 'pg'
import t, { type Test } from 'tap'
import {
  createTestDatabase,
  startReplicaProcess,
  startTestIssuer,
  testServerUrl,
  until,
  type ReplicaProcess,
  type TestIssuer,
} from '@svc/testkit'

// Two replicas of each service started at once on an empty database (issue 51): migrations, the
// job queue's schema and every queue are created by whichever process gets there first, and the
// others must wait for it, not fail. Before, pg-boss's queue creation deadlocked between two
// processes (40P01 on its partitions' foreign key) and the loser exited.
//
// The last round's four processes then ride through a failover under load (decision 0013,
// "Database blips"): every backend is cut twice, 5 s apart, while both products take alerts and
// both platforms answer reads. A request that meets a cut may answer a clean 503; once a replica
// answers ready again, it serves: no request it takes after that answers 5xx.
const ROUNDS = 3

if (!testServerUrl()) {
  t.plan(0, 'replicas share a database only on PostgreSQL (TEST_DATABASE_URL; the PostgreSQL pass of pnpm test sets it)')
} else {
  // Four processes a round, each compiling the sources with tsx on a two-core machine.
  t.setTimeout(420_000)
  const issuer = await startTestIssuer(t)
  for (let round = 1; round <= ROUNDS; round++) {
    t.test(`round ${round}: four processes on one empty database all come up`, async (t) => {
      const databaseUrl = (await createTestDatabase(t, { empty: true }))!
      const services = ['platform', 'platform', 'product', 'product'] as const
      const replicas = await Promise.all(
        services.map((service) => startReplicaProcess(t, { service, databaseUrl, issuer, readyTimeoutMs: 180_000 })),
      )
      for (const [index, replica] of replicas.entries()) {
        const ready = await fetch(`${replica.url}/api/v1/health/ready`)
        t.equal(ready.status, 200, `${services[index]} ${index} is ready`)
        t.notMatch(replica.output(), /40P01|deadlock|exited/, `${services[index]} ${index} logged no deadlock`)
      }
      if (round === ROUNDS) {
        const [platformA, platformB, productA, productB] = replicas as [ReplicaProcess, ReplicaProcess, ReplicaProcess, ReplicaProcess]
        await t.test('every backend cut twice under load: a replica that answers ready serves', (t) =>
          cutTwiceUnderLoad(t, databaseUrl, issuer, { platforms: [platformA, platformB], products: [productA, productB] }),
        )
      }
      await Promise.all(replicas.map((replica) => replica.kill()))
    })
  }
}

/** What one request answered, and when. */
interface Answer {
  replica: ReplicaProcess
  answeredAt: number
  status: number
  code?: string
  message?: string
  retryAfter: string | null
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function cutTwiceUnderLoad(
  t: Test,
  databaseUrl: string,
  issuer: TestIssuer,
  { platforms, products }: { platforms: ReplicaProcess[]; products: ReplicaProcess[] },
) {
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  t.teardown(() => admin.end())
  const headers = { authorization: `Bearer ${issuer.idp.mintIdToken({ email: 'owner@failover.example', groups: [] })}` }
  const { userId } = (await (await fetch(`${products[0]!.url}/auth/me`, { headers })).json()) as { userId: string }
  // Organizations are the platform's: written as it leaves them.
  const created = await admin.query<{ id: string }>(
    `insert into core.organizations (name, slug) values ('Failover', 'failover') returning id`,
  )
  const orgId = created.rows[0]!.id
  await admin.query(`insert into core.organization_members (organization_id, user_id, role) values ($1, $2, 'owner')`, [orgId, userId])
  const webhook = (await (
    await fetch(`${products[0]!.url}/api/v1/organizations/${orgId}/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Failover' }),
    })
  ).json()) as { ingestPath: string }

  // Load: each product takes alerts on four connections, each platform answers reads on two.
  const answers: Answer[] = []
  let loading = true
  let sent = 0
  const load = async (replica: ReplicaProcess, request: () => Promise<Response>) => {
    while (loading) {
      const response = await request()
      const body = (await response.json()) as { code?: string; message?: string }
      answers.push({
        replica,
        answeredAt: Date.now(),
        status: response.status,
        code: body.code,
        message: body.message,
        retryAfter: response.headers.get('retry-after'),
      })
    }
  }
  const ingest = (replica: ReplicaProcess) => () =>
    fetch(`${replica.url}${webhook.ingestPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: `Alert ${++sent}`, priority: 'P4' }),
    })
  const read = (replica: ReplicaProcess) => () => fetch(`${replica.url}/api/v1/organizations`, { headers })
  const loops = [
    ...products.flatMap((replica) => Array.from({ length: 4 }, () => load(replica, ingest(replica)))),
    ...platforms.flatMap((replica) => Array.from({ length: 2 }, () => load(replica, read(replica)))),
  ]

  /** Ends every connection to the database but this one, as a failover does. */
  const cutEveryBackend = async () => {
    const { rowCount } = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    )
    t.ok(rowCount! > 4, `${rowCount} backends cut`)
  }
  await pause(1_000)
  await cutEveryBackend()
  await pause(5_000)
  await cutEveryBackend()
  // When each replica first answers ready after the last cut.
  const replicas = [...platforms, ...products]
  const readyAt = new Map<ReplicaProcess, number>()
  await Promise.all(
    replicas.map((replica) =>
      until(`${replica.url} to answer ready after the cut`, async () => {
        const ready = await fetch(`${replica.url}/api/v1/health/ready`)
        if (ready.status === 200) readyAt.set(replica, Date.now())
        return ready.status === 200 || undefined
      }),
    ),
  )
  await pause(2_000)
  loading = false
  await Promise.all(loops)

  const refused = answers.filter((answer) => answer.status >= 300)
  t.ok(answers.length > refused.length + 100, `${answers.length} requests, ${refused.length} refused`)
  const unclean = refused.filter((answer) => answer.status !== 503 || answer.code !== 'DATABASE_UNAVAILABLE' || answer.retryAfter === null)
  expectNone(t, describe(unclean, readyAt), 'a request that met a cut answered a clean 503 with Retry-After, never a 500')
  // The fault run that asked for this saw 503s after readiness; on this code, in processes under
  // load, the requests that meet a cut have answered before their replica's ping works again.
  const afterReady = refused.filter((answer) => answer.answeredAt >= readyAt.get(answer.replica)!)
  expectNone(t, describe(afterReady, readyAt), 'no replica answered a 5xx after it had answered ready')
  for (const replica of replicas) t.notMatch(replica.output(), /exited/, `${replica.url} is still running`)
}

/** CI's summary prints only a failed assertion's name: a failure names its first two answers. */
function expectNone(t: Test, found: ReturnType<typeof describe>, name: string) {
  t.same(found, [], found.length === 0 ? name : `${name}; ${found.length} did not: ${JSON.stringify(found.slice(0, 2))}`)
}

/**
 * The refusals as a failure should show them: which replica, what it answered, how long after it
 * answered ready, and the errors that replica logged. The answers themselves hold the process.
 */
function describe(answers: Answer[], readyAt: Map<ReplicaProcess, number>) {
  return answers.map((answer) => ({
    replica: answer.replica.url,
    status: answer.status,
    code: answer.code,
    message: answer.message,
    retryAfter: answer.retryAfter,
    msAfterReady: answer.answeredAt - readyAt.get(answer.replica)!,
    logged: loggedErrors(answer.replica),
  }))
}

/** The messages of the errors a replica logged (pino's level 50 and above), the last five. */
function loggedErrors(replica: ReplicaProcess): string[] {
  return replica
    .output()
    .split('\n')
    .filter((line) => /"level":(5|6)\d/.test(line))
    .map((line) => /"message":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 300))
    .slice(-5)
}
