/**
 * Which test files run on which engine. The whole suite runs on PostgreSQL, the production
 * engine; the PGlite pass runs only what can differ on the embedded default: the database
 * package, the migrations, the job queue, the embedded start, every file that uses the database
 * below the service (a driver, the queue, the migrations, a database it opens itself), and one
 * end-to-end path per surface. `scripts/test/engine-split.test.ts` fails when a file that touches
 * the engine is missing here, so the list cannot fall behind the tests (docs/testing.md).
 */

export interface PgliteFile {
  /** Why this file runs on PGlite too. */
  why: string
  /** The surface (a plugin, or a service) whose end-to-end path on PGlite this file is. */
  surface?: string
}

export const PGLITE_FILES: Record<string, PgliteFile> = {
  // The database package and the migrations: the engines' own code paths.
  'packages/db/test/database.test.ts': { why: 'opens, migrates and closes both engines' },
  'packages/db/test/group-commit.test.ts': { why: 'the database package (no engine: milliseconds on either pass)' },
  'packages/db/test/change-notices.test.ts': { why: 'LISTEN/NOTIFY: PGlite delivers notices in a statement’s answer' },
  'packages/db/test/due-notices.test.ts': { why: 'LISTEN/NOTIFY on the listener’s connection, or in PGlite’s answers' },
  'packages/db/test/pglite-statements.test.ts': { why: 'the PGlite pool’s kept statements' },
  'packages/db/test/kept-statements.test.ts': { why: 'statements marked keptPrepared: named on PostgreSQL, a comment on PGlite' },
  'packages/db/test/paging.test.ts': { why: 'keyset paging SQL on a database it opens' },
  'packages/db/test/invitation-migration.test.ts': { why: 'a migration over existing rows' },
  'packages/db/test/json-keys-repair.test.ts': { why: 'a migration over existing rows' },
  'packages/db/test/retention-migrations.test.ts': { why: 'migrations over existing rows' },
  'packages/db/test/service-edges-migration.test.ts': { why: 'a migration over existing rows' },
  'packages/db/test/escalation-correlation-migration.test.ts': { why: 'a migration over existing rows' },
  // The job queue: pg-boss on the pool, or on PGlite's one connection.
  'packages/jobs/test/queue.test.ts': { why: 'pg-boss on both engines' },
  'packages/jobs/test/census.test.ts': { why: 'the census statement, prepared, over pg-boss on both engines' },
  'packages/jobs/test/poller.test.ts': { why: 'the job package (no engine: milliseconds on either pass)' },
  'packages/notifier/test/delivery.test.ts': { why: 'outbox delivery on a job queue it starts itself' },
  // The embedded start: what `pnpm start` runs on a fresh machine.
  'scripts/test/embedded-start.test.ts': { why: 'the embedded default, started as README says' },
  // Files that open a database of their own below a service.
  'plugins/alerting/test/ingest-writes.test.ts': { why: 'ingest’s statements on a database it opens' },
  'plugins/alerting/test/correlation-batch.test.ts': { why: 'correlation’s statements on a database it opens' },
  'plugins/alerting/test/chat-sync-claims.test.ts': { why: 'the chat sync’s claims on a database it opens' },
  'plugins/statuspages/test/cache.test.ts': { why: 'change notices invalidating the page cache' },
  'services/platform/test/dev-outbox.test.ts': { why: 'the outbox on a database it opens' },
  'services/product/test/access-rules.test.ts': { why: 'reads the database with a driver of its own' },
  'services/product/test/any-rs256-issuer.test.ts': { why: 'a service on a database it creates itself' },
  // PostgreSQL only: each says so on PGlite in a line, and costs only its start.
  'services/platform/test/replica-killed.test.ts': { why: 'server only (terminates backends)' },
  'services/product/test/replica-killed.test.ts': { why: 'server only (terminates backends)' },
  'services/product/test/database-blips.test.ts': { why: 'server only (cuts connections)' },
  'services/product/test/replicas-start-together.test.ts': { why: 'server only (replica processes)' },
  'services/platform/test/replicas-redis.test.ts': { why: 'server only (replica processes)' },
  'scripts/test/runtime-tree.test.ts': { why: 'server only (the image’s tree, started on PostgreSQL)' },
  // One end-to-end path per surface.
  'services/platform/test/organizations.test.ts': { why: 'organizations, members and roles', surface: 'platform' },
  'services/platform/test/scim-users.test.ts': { why: 'SCIM provisioning', surface: 'platform' },
  'services/product/test/alerting/incidents/incidents.test.ts': { why: 'alerts to incidents', surface: 'alerting' },
  'services/product/test/status-pages.test.ts': { why: 'status pages and subscribers', surface: 'statuspages' },
  'services/product/test/synthetics.test.ts': { why: 'checks, runs and their state', surface: 'synthetics' },
  'services/product/test/insights.test.ts': { why: 'analyses from ingested alerts', surface: 'insights' },
  'services/product/test/product-users.test.ts': { why: 'product users and contact methods', surface: 'product-users' },
  'services/product/test/product-service.test.ts': { why: 'the product service as a whole', surface: 'product' },
  'services/product/test/synthetics-relay.test.ts': { why: 'a relay process running checks', surface: 'relay' },
}
