import { spawn, type ChildProcessByStdio } from 'node:child_process'
import type { Readable } from 'node:stream'

/**
 * Starts a bench's server script (`bench/…-server.ts`) in a process of its own, so the load
 * generator's CPU is not counted as the server's. Its first line on stdout says where it listens;
 * `BENCH_PROFILE=<dir>` writes its CPU profile there (node --cpu-prof) when it exits.
 */
export function spawnBenchServer(script: string, env: Record<string, string> = {}): ChildProcessByStdio<null, Readable, null> {
  return spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : []),
      '--conditions=@svc/source',
      '--import',
      'tsx',
      script,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  )
}
