import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'

export interface CorsSettings {
  /** ALLOWED_ORIGINS: browser applications that call the API with their cookies. */
  allowedOrigins: string[]
  /** Paths anyone may read from any page, without credentials (public status pages). */
  publicPrefixes?: string[]
}

const METHODS = 'GET,HEAD,POST,PUT,PATCH,DELETE'
// What a browser client needs to read besides the simple headers: when to retry after a 429,
// where a created resource lives, and our id of the request for a support ticket.
const EXPOSED_HEADERS = 'Retry-After,Location,X-Request-Id'

/**
 * CORS through @fastify/cors, decided per request: the configured origins get credentialed
 * access (their cookies are sent and read), public prefixes answer `*` without credentials,
 * and any other origin gets no CORS headers, so its browser keeps the answer from it. The
 * preflight is answered in an onRequest hook, before the gates (it carries no credentials).
 */
export async function registerCors(app: FastifyInstance, settings: CorsSettings): Promise<void> {
  const publicPrefixes = settings.publicPrefixes ?? []
  const allowed = new Set(settings.allowedOrigins)
  const credentialed: FastifyCorsOptions = {
    origin: true,
    credentials: true,
    methods: METHODS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  }
  const open: FastifyCorsOptions = { origin: '*', credentials: false, methods: 'GET,HEAD', maxAge: 600 }
  // No CORS at all (the credentials header included), and a preflight from there is a 404.
  const none: FastifyCorsOptions = { origin: false }
  await app.register(cors, {
    delegator: (request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void) => {
      const path = request.url
      if (publicPrefixes.some((prefix) => path.startsWith(prefix))) return callback(null, open)
      const origin = request.headers.origin
      callback(null, origin !== undefined && allowed.has(origin) ? credentialed : none)
    },
  })
}
