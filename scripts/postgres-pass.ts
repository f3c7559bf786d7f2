/**
 * Whether `pnpm test` runs its PostgreSQL pass. PGlite serves one connection at a time, so
 * the concurrency tests prove something only on PostgreSQL: in CI (`CI=true`) a missing
 * server fails the run; elsewhere the pass is skipped with a line saying so.
 */
export type PostgresPass = { run: string } | { skip: string } | { fail: string }

export function postgresPass(env: NodeJS.ProcessEnv, reachableServer: string | undefined): PostgresPass {
  const server = env.TEST_DATABASE_URL || reachableServer
  if (server) return { run: server }
  const reason = 'no PostgreSQL server reachable (set TEST_DATABASE_URL)'
  if (env.CI === 'true') return { fail: `CI=true and ${reason}: the PostgreSQL pass is required in CI` }
  return { skip: `${reason}: the PostgreSQL pass was skipped` }
}
