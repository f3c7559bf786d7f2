import pg from 'pg'
import t, { type Test } from 'tap'
import { createTestDatabase, startReplicaProcess, startTestIssuer, testServerUrl, until } from '@svc/testkit'

// A platform replica killed with SIGKILL while it writes a report (decision 0018, "A writer that
// dies"): two replicas run as production runs them, each its own process started from
// server.ts on one PostgreSQL database. The first is killed while its report waits on a lock the
// test holds on the table the report reads; the second, already running, writes the report
// within a minute or two of the kill, not after the job's 15-minute expiry.
if (!testServerUrl()) {
  t.plan(0, 'replicas share a database only on PostgreSQL (TEST_DATABASE_URL; the PostgreSQL pass of pnpm test sets it)')
} else {
  // Two processes to start, 30 s of silence, then the next minute's sweep: over tap's 120 s.
  t.setTimeout(300_000)
  t.test('a report whose writer is killed is written by the other replica within two minutes', killedMidReport)
}

async function killedMidReport(t: Test) {
  const databaseUrl = (await createTestDatabase(t))!
  const issuer = await startTestIssuer(t)
  const env = { REPORTS_SIGNING_KEY: 'a report signing key of at least 32 characters' }
  const first = await startReplicaProcess(t, { service: 'platform', databaseUrl, issuer, env })
  const headers = { authorization: `Bearer ${issuer.idp.mintIdToken({ email: 'owner@killed.example', groups: [] })}` }
  const call = async (url: string, method = 'GET', body?: object) => {
    const response = await fetch(`${first.url}${url}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const created = await call('/api/v1/organizations', 'POST', { name: 'Killed', slug: 'killed' })
  t.equal(created.status, 201, 'the organization is created')
  const orgId = created.body.id as string

  // The incidents report reads the alerts: a lock on them holds the writer in the middle of it.
  const locker = new pg.Client({ connectionString: databaseUrl })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('begin')
  await locker.query('lock table divinux.alerts in access exclusive mode')

  const requested = await call(`/api/v1/organizations/${orgId}/reports/generate`, 'POST', {
    type: 'incidents',
    format: 'csv',
    from: new Date(Date.now() - 7 * 86_400_000).toISOString(),
    to: new Date().toISOString(),
  })
  t.equal(requested.status, 202, 'the report is queued')
  const reportId = requested.body.id as string
  const reportRow = () =>
    locker.query<{ status: string; heartbeat_at: Date; completed_at: Date | null }>(
      'select status, heartbeat_at, completed_at from core.reports where id = $1',
      [reportId],
    )
  await until(
    'the first replica to be writing the report, waiting on the lock',
    async () => {
      const waiting = await locker.query(`select 1 from pg_locks where relation = 'divinux.alerts'::regclass and not granted`)
      return (await reportRow()).rows[0]?.status === 'running' && waiting.rowCount! > 0
    },
    30_000,
  )

  // The second replica is up before the first dies: it leaves a report whose writer beats alone.
  const second = await startReplicaProcess(t, { service: 'platform', databaseUrl, issuer, env })
  t.equal((await reportRow()).rows[0]?.status, 'running', 'a report whose writer lives is left to it')

  await first.kill()
  const killedAt = Date.now()
  await locker.query('rollback')

  const ready = await until(
    'the report to be written by the second replica',
    async () => {
      const row = (await reportRow()).rows[0]
      if (row?.status === 'failed') throw new Error('the report failed')
      return row?.status === 'ready' ? row : undefined
    },
    180_000,
  )
  const waited = ready.completed_at!.getTime() - killedAt
  t.ok(waited < 120_000, `written ${Math.round(waited / 1000)} s after its writer was killed`)
  const listed = await fetch(`${second.url}/api/v1/organizations/${orgId}/reports`, { headers })
  t.match(
    await listed.json(),
    { data: [{ id: reportId, status: 'ready', fileName: /^incidents-.*\.csv$/ }] },
    'the second replica lists it',
  )
}
