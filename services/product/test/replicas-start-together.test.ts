import t from 'tap'
import { createTestDatabase, startReplicaProcess, startTestIssuer, testServerUrl } from '@svc/testkit'

// Two replicas of each service started at once on an empty database (issue 51): migrations, the
// job queue's schema and every queue are created by whichever process gets there first, and the
// others must wait for it, not fail. Before, pg-boss's queue creation deadlocked between two
// processes (40P01 on its partitions' foreign key) and the loser exited.
const ROUNDS = 3

if (!testServerUrl()) {
  t.plan(0, 'replicas share a database only on PostgreSQL (TEST_DATABASE_URL; the PostgreSQL pass of pnpm test sets it)')
} else {
  // Four processes a round, each compiling the sources with tsx on a two-core machine.
  t.setTimeout(360_000)
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
      await Promise.all(replicas.map((replica) => replica.kill()))
    })
  }
}
