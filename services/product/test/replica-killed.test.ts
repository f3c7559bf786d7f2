import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { openDatabase } from '@svc/db'
import { createTestDatabase, startReplicaProcess, startSmtpServer, startTestIssuer, testServerUrl, until } from '@svc/testkit'

// A replica killed with SIGKILL in the middle of its work (decision 0013, "Replicas that die"):
// two product replicas run as production runs them, each its own process started from
// server.ts on one PostgreSQL database. The first takes a synthetic run and a page, and is
// killed while the check's target and the SMTP server hold its requests unanswered; the second,
// already running, must settle both: the run recorded missed and never run again (it may have
// reached the target: a due time runs at most once), the page sent with the same Message-ID, each
// within well under a minute of the kill.
if (!testServerUrl()) {
  t.plan(0, 'replicas share a database only on PostgreSQL (TEST_DATABASE_URL; the PostgreSQL pass of pnpm test sets it)')
} else {
  // Two processes to start (tsx compiles the sources), then the sweeps' 20 s: over tap's 120 s.
  t.setTimeout(240_000)
  t.test('a replica killed in the middle of a run and a send: the run is not run twice, the page is sent once more', killedMidRunAndMidSend)
}

async function killedMidRunAndMidSend(t: Test) {
  const databaseUrl = (await createTestDatabase(t))!
  const database = await openDatabase({ databaseUrl, poolSize: 2 })
  t.teardown(() => database.close())
  const db = database.db
  const issuer = await startTestIssuer(t)
  // The first message is handed over and never answered; any later one is taken.
  const smtp = await startSmtpServer(t, undefined, { stall: (n) => n === 1 })
  // The check's target holds every request open until the first replica is killed, then answers
  // 200. The run retries (5 times, 30 s each), so it is still under way however long the second
  // replica takes to start on a busy machine (one attempt's 30 s was seen to run out first).
  const targetRequests: number[] = []
  let killedAt: number | undefined = undefined
  const target = http.createServer((_request, response) => {
    targetRequests.push(Date.now())
    if (killedAt !== undefined) response.end('ok')
  })
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => target.closeAllConnections() ?? target.close(() => resolve())))
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`

  // The stalled send must still be in flight when the first replica is killed, however long the
  // second takes to start on a busy machine: past the provider's 30 s socket timeout the first
  // replica records the send failed and its retry waits a minute (CI saw exactly that). nodemailer
  // reads transport options from the URL's query, over the provider's own.
  const env = {
    SMTP_URL: `${smtp.url}/?socketTimeout=240000`,
    SMTP_FROM: 'Paging <paging@example.com>',
    ALLOW_PRIVATE_TARGETS: 'true',
  }
  const first = await startReplicaProcess(t, { service: 'product', databaseUrl, issuer, env })

  const signIn = async (email: string) => {
    const headers = { authorization: `Bearer ${issuer.idp.mintIdToken({ email, groups: [] })}` }
    const me = await fetch(`${first.url}/auth/me`, { headers })
    return { headers, userId: ((await me.json()) as { userId: string }).userId }
  }
  const owner = await signIn('owner@killed.example')
  const ada = await signIn('ada@killed.example')
  // Organizations are the platform's: written as it leaves them.
  const { id: orgId } = await db
    .insertInto('core.organizations')
    .values({ name: 'Killed', slug: 'killed' })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('core.organizationMembers')
    .values([
      { organizationId: orgId, userId: owner.userId, role: 'owner' },
      { organizationId: orgId, userId: ada.userId, role: 'member' },
    ])
    .execute()
  const post = async (path: string, body: object) => {
    const response = await fetch(`${first.url}/api/v1${path}`, {
      method: 'POST',
      headers: { ...owner.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).catch(async (error: Error) => {
      await new Promise((resolve) => setTimeout(resolve, 500))
      throw new Error(`${path}: ${error.message}; the replica wrote:\n${first.output()}`)
    })
    const answer = (await response.json()) as Record<string, unknown>
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`)
    return answer
  }

  // A page: an alert routed to a policy whose first step is Ada, who gets P4 pages by e-mail.
  const policy = await post(`/organizations/${orgId}/escalation-policies`, {
    name: 'Ada',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: ada.userId }] }],
  })
  const webhook = await post(`/organizations/${orgId}/webhooks`, { name: 'Killed', escalationPolicyId: policy.id })
  const ingested = await fetch(`${first.url}${webhook.ingestPath as string}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Disk full on db-1', priority: 'P4' }),
  })
  t.equal(ingested.status, 202, 'the alert is taken')
  // A run: a check due at once.
  const check = await post(`/synthetics/organizations/${orgId}/checks`, {
    name: 'Health',
    kind: 'http',
    frequencySeconds: 300,
    timeoutMs: 30_000,
    retries: 5,
    request: { url: targetUrl },
  })

  await until('the first replica to hold the run and the page', () => targetRequests.length >= 1 && smtp.stalled.length === 1, 30_000)
  const page = smtp.stalled[0]!
  const leased = await db
    .selectFrom('divinux.syntheticRuns')
    .select(['id', 'dueAt', 'runnerId', 'state'])
    .where('checkId', '=', check.id as string)
    .executeTakeFirstOrThrow()
  t.equal(leased.state, 'leased', 'the run is leased by the first replica')

  // The second replica is up before the first dies, as it is in production: it must leave the
  // work of a replica that is alive alone, then take it once that replica is gone.
  const second = await startReplicaProcess(t, { service: 'product', databaseUrl, issuer, env })
  t.equal(smtp.received.length, 0, 'no page is sent twice while its sender lives')
  t.match(
    await db
      .selectFrom('divinux.syntheticRuns')
      .select(['id', 'state', 'runnerId'])
      .where('checkId', '=', check.id as string)
      .execute(),
    [{ id: leased.id, state: 'leased', runnerId: leased.runnerId }],
    'no run is taken twice while its runner lives: one run, still the first replica’s',
  )

  await first.kill()
  killedAt = Date.now()

  const recorded = await until(
    'the run to be recorded missed by the second replica',
    async () => {
      const run = await db
        .selectFrom('divinux.syntheticRuns')
        .select(['state', 'status', 'runnerId', 'error'])
        .where('id', '=', leased.id)
        .executeTakeFirstOrThrow()
      return run.state === 'missed' ? run : undefined
    },
    60_000,
  ).catch(async (error: Error) => {
    // What the second replica said and what the runners' rows held, to tell a slow sweep from a broken one.
    const runners = await db.selectFrom('divinux.syntheticRunners').select(['id', 'heartbeatAt']).execute()
    throw new Error(`${error.message}\nrunners: ${JSON.stringify(runners)}\nthe second replica wrote:\n${second.output()}`)
  })
  const settledAfter = Date.now() - killedAt
  t.ok(settledAfter < 45_000, `recorded missed ${settledAfter} ms after the kill`)
  t.equal(recorded.status, null, 'with no result')
  t.match(recorded.error, /runner stopped while running it/, 'saying why')
  t.equal(recorded.runnerId, leased.runnerId, 'still naming the runner that had it')
  const runsAtThatTime = await db
    .selectFrom('divinux.syntheticRuns')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('checkId', '=', check.id as string)
    .where('dueAt', '=', leased.dueAt)
    .executeTakeFirstOrThrow()
  t.equal(Number(runsAtThatTime.count), 1, 'one run for that due time')
  t.same(
    targetRequests.filter((at) => at >= killedAt!),
    [],
    'the target got the killed run’s requests only: the due time ran once',
  )

  const resent = await until('the page to be sent by the second replica', () => smtp.received[0], 60_000).catch(async (error: Error) => {
    // What the outbox held and what the second replica said, to tell a slow sweep from a failed send.
    const rows = await db.selectFrom('core.outbox').select(['status', 'attempts', 'claimedUntil', 'lastError', 'updatedAt']).execute()
    throw new Error(`${error.message}\noutbox: ${JSON.stringify(rows)}\nthe second replica wrote:\n${second.output()}`)
  })
  t.ok(resent.at - killedAt < 45_000, `sent again ${resent.at - killedAt} ms after the kill`)
  t.equal(resent.messageId, page.messageId, 'with the Message-ID of the first attempt, so a receiver can drop the repeat')
  t.same(resent.envelopeTo, ['ada@killed.example'])
  // The receiver has the message a moment before the sender records that it was taken.
  const outbox = await until('the second replica to record the page sent', async () => {
    const rows = await db
      .selectFrom('core.outbox')
      .select(['status', 'attempts'])
      .where('recipient', '=', 'ada@killed.example')
      .where('channel', '=', 'email')
      .execute()
    return rows.every((row) => row.status !== 'pending') && rows
  })
  t.match(outbox, [{ status: 'sent', attempts: 2 }], 'one message, sent, on its second attempt')
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  t.equal(smtp.received.length, 1, 'and not a third time')
  t.equal((await fetch(`${second.url}/api/v1/health/ready`)).status, 200, 'the second replica is well')
}
