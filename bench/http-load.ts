// The load the ingestion benches send: `connections` loops, each sending one request after another
// until the time is up, each finishing the request it started (so every 2xx is counted, and
// "stored equals answered" can be checked exactly; autocannon aborts requests in flight).
import { Pool } from 'undici'

export interface LoadRequest {
  body: string
  headers: Record<string, string>
}

export interface LoadResult {
  accepted: number
  rejected: number
  seconds: number
  latencies: number[]
}

/** POSTs `request()`'s bodies to `url` over `connections` connections for `seconds`. */
export async function postLoad(url: string, seconds: number, connections: number, request: () => LoadRequest): Promise<LoadResult> {
  const target = new URL(url)
  const pool = new Pool(target.origin, { connections, pipelining: 1 })
  const latencies: number[] = []
  let accepted = 0
  let rejected = 0
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const { body, headers } = request()
        const sent = performance.now()
        try {
          const response = await pool.request({ path: `${target.pathname}${target.search}`, method: 'POST', headers, body })
          await response.body.dump()
          latencies.push(performance.now() - sent)
          if (response.statusCode >= 200 && response.statusCode < 300) accepted += 1
          else rejected += 1
        } catch {
          rejected += 1
        }
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  await pool.close()
  return { accepted, rejected, seconds: elapsed, latencies }
}
