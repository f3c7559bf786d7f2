// What `pnpm bench` and `pnpm bench:statuspage` compute from their rounds.

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

/**
 * Each round's ratio of requests per second (two loads a few seconds apart), then the median of
 * the rounds. This machine's speed drifts over tens of seconds; a ratio of two medians taken
 * from different rounds would carry that drift into it.
 */
export function roundRatios(part: Array<{ requestsPerSecond: number }>, whole: Array<{ requestsPerSecond: number }>): number[] {
  return part.map((sample, round) => sample.requestsPerSecond / whole[round]!.requestsPerSecond)
}

export const pairedRatio = (...rounds: Parameters<typeof roundRatios>) => median(roundRatios(...rounds))

export const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`

/** Each round's CPU per request of the bare baseline over the route's, then their median. */
export function pairedCpuRatio(part: Array<{ cpuPerRequest: number }>, whole: Array<{ cpuPerRequest: number }>): number {
  return median(part.map((sample, round) => whole[round]!.cpuPerRequest / sample.cpuPerRequest))
}
