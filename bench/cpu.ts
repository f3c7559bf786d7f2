// CPU time from /proc, for the benchmarks that report CPU per request beside requests per second:
// the load generator shares the machine's cores with the servers, so requests per second also
// measure how the scheduler shared them, while CPU per request measures each process's own work.
// Linux only: elsewhere every reading is NaN.
import { readdirSync, readFileSync } from 'node:fs'

/** µs of one clock tick of /proc (USER_HZ, 100 on Linux). */
const TICK_MICROSECONDS = 10_000

/** A process's user and system CPU time so far, in µs; NaN when it cannot be read. */
export function processCpu(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_MICROSECONDS
  } catch {
    return Number.NaN
  }
}

/**
 * The PostgreSQL processes working for `database` on this machine: its backends (titled
 * `postgres: [cluster: ]user database …`) and the server's WAL writer, checkpointer and
 * background writer, which write what the backends leave them. Autovacuum workers come and go, so
 * they are not counted.
 */
export function databaseProcesses(database: string): number[] {
  const pids: number[] = []
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      try {
        const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/(?<!\0)\0+$/, '')
        const backend = /^postgres: (?:\S+: )?\S+ (\S+) /.exec(title)
        if (backend?.[1] === database || /^postgres: (?:\S+: )?(?:walwriter|checkpointer|background writer)/.test(title))
          pids.push(Number(entry))
      } catch {
        // The process ended meanwhile.
      }
    }
  } catch {
    // No /proc.
  }
  return pids
}

/** The whole machine's idle and total CPU time so far, in µs (all cores). */
export function machineCpu(): { idle: number; total: number } {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/)
    const ticks = fields.slice(0, 8).map(Number)
    return { idle: (ticks[3]! + ticks[4]!) * TICK_MICROSECONDS, total: ticks.reduce((sum, tick) => sum + tick, 0) * TICK_MICROSECONDS }
  } catch {
    return { idle: Number.NaN, total: Number.NaN }
  }
}
