import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `publicCors` on a route anyone may read from any page (public status pages); `false`: no CORS. */
    cors?: typeof publicCors | false
  }
}

/**
 * A public surface's routes (status pages) set `config: { cors: publicCors }`: any origin may
 * read them, without credentials. Their GETs are simple requests, so no preflight is needed.
 */
export const publicCors = Object.freeze({ origin: '*' as const, credentials: false as const })

export interface CorsSettings {
  /** ALLOWED_ORIGINS: browser applications that call the API with their cookies. */
  allowedOrigins: string[]
}

const METHODS = 'GET,HEAD,POST,PUT,PATCH,DELETE'
// What a browser client needs to read besides the simple headers: when to retry after a 429,
// where a created resource lives, and our id of the request for a support ticket.
const EXPOSED_HEADERS = 'Retry-After,Location,X-Request-Id'

/**
 * What `publicCors` answers, as fixed headers: a surface whose every route is public to any
 * origin (the status pages' public documents) sets them in one hook of its own and declares
 * `cors: false`, rather than have @fastify/cors merge its options again on every request (4 %
 * of the documents' CPU in `pnpm bench:statuspage`). Set in onRequest, so 404 and 429 answers
 * carry them too.
 */
export const PUBLIC_CORS_HEADERS = Object.freeze({ 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS })

/**
 * CORS through @fastify/cors with static options (its cheapest path: nothing is computed per
 * request but the origin check): the configured origins get credentialed access (their cookies
 * are sent and read); any other origin gets no Access-Control-Allow-Origin, so its browser keeps
 * the answer from it; with no ALLOWED_ORIGINS there is no CORS at all. Routes override it with
 * `config.cors` (`publicCors`). The preflight is answered in an onRequest hook, before the gates.
 */
export async function registerCors(app: FastifyInstance, settings: CorsSettings): Promise<void> {
  await app.register(cors, {
    origin: settings.allowedOrigins.length > 0 ? settings.allowedOrigins : false,
    credentials: true,
    methods: METHODS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  })
}
