import { performance } from 'node:perf_hooks'

interface Timing {
  ok(value: unknown, message: string): unknown
}

const fastest = (work: () => unknown, rounds: number) => {
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    work()
    best = Math.min(best, performance.now() - started)
  }
  return best
}

/**
 * That `work` reads a crafted input about as fast as a benign one of the same size: the check for
 * a pattern run on user text (issue 51), where a backtracking match takes seconds on the crafted
 * one and milliseconds on the other. The fastest of three rounds of each is compared, with room
 * for a busy machine (ten times, plus 25 ms); a super-linear match misses it by orders of magnitude.
 */
export function assertLinearTime<T>(t: Timing, work: (input: T) => unknown, inputs: { crafted: T; benign: T }, what: string): void {
  const benign = fastest(() => work(inputs.benign), 3)
  const crafted = fastest(() => work(inputs.crafted), 3)
  t.ok(crafted <= benign * 10 + 25, `${what}: crafted input ${crafted.toFixed(1)} ms, benign ${benign.toFixed(1)} ms`)
}
