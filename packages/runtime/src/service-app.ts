import { randomUUID } from 'node:crypto'
import Fastify, {
  LogController,
  errorCodes,
  type onRequestHookHandler,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { authPlugin, cookieRoutes } from '@svc/auth'
import { DEFAULT_HTTP_TIMEOUTS, DEFAULT_RETENTION_CONFIG, type ServiceConfig, type TrustProxy } from '@svc/config'
import { API_REFERENCE_PREFIX, apiReferencePlugin, healthRoutes, httpConventions, redactedUrl, toErrorBody } from '@svc/http'
import { requestMetricsPlugin } from '@svc/metrics'
import { lazyRequestLogger } from './request-logger.js'
import { openResources, type Resources } from './resources.js'
import { createStorageMaintenance } from './storage-maintenance.js'

export interface ServiceDefinition {
  /** `platform` or `product`: in logs and the health answer. */
  name: string
  title: string
  description: string
  /** Adds /health/live and /health/ready. */
  probes?: boolean
  /** Registers the service's surface plugins. */
  surfaces(app: FastifyInstance): Promise<void>
  /**
   * Paths match in any letter case and with or without a trailing slash (SCIM clients vary
   * both). Router options rather than a URL rewrite: a rewrite runs on every request and cost
   * the authenticated route about 7 points of the bare-Fastify ratio in `pnpm bench`.
   */
  lenientPaths?: boolean
  /**
   * Answers an error the router raises before any route or hook runs (a path parameter over
   * 100 characters is 414, a malformed URL 400) in a shape of the service's own for some paths
   * (SCIM's); answers false to leave it to the API's error body.
   */
  routerError?(error: FastifyError, request: FastifyRequest, reply: FastifyReply): boolean
}

/** Router errors carry the request path in their message: the answer says what is wrong instead. */
const ROUTER_ERROR_MESSAGES = new Map([
  ['FST_ERR_MAX_PARAM_LENGTH', 'a path parameter is longer than 100 characters'],
  ['FST_ERR_BAD_URL', 'the URL is not valid'],
])

function routerErrorBody(error: FastifyError, request: FastifyRequest) {
  const body = toErrorBody(error, request)
  return { ...body, message: ROUTER_ERROR_MESSAGES.get(error.code) ?? body.message }
}

const BODY_LIMIT = 1024 * 1024

/**
 * A request whose declared body is larger than its route takes is refused (413) before anything
 * else runs for it, authentication and rate limits included, and its connection closed rather than
 * its body read and thrown away: ten megabytes sent to a route that takes one cost the service
 * nothing but this answer (issue 51).
 */
const refuseDeclaredOversizedBodies: onRequestHookHandler = function refuseDeclaredOversizedBodies(request, reply, done) {
  const declared = request.headers['content-length']
  if (declared !== undefined && Number(declared) > request.routeOptions.bodyLimit) {
    reply.header('connection', 'close')
    return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
  }
  done()
}

/** One log line per request, when it is answered and saying what it was, not Fastify's two. */
class OneLinePerRequest extends LogController {
  /** At a level that drops the line (the benchmarks run at warn), nothing is built for it. */
  constructor(private readonly logsRequests: boolean) {
    super()
  }
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    if (!this.logsRequests && !error) return
    const line = `${request.method} ${redactedUrl(request.url)} ${reply.statusCode}`
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, line)
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, line)
  }
}

// Secrets never reach the logs: credentials in headers, and API keys in ingest paths.
const redact = {
  paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-webhook-signature"]', 'res.headers["set-cookie"]'],
  censor: '[redacted]',
}

/**
 * A hop count trusts the nearest `hops` peers, whoever they are (proxy-addr's hop trust, as
 * Express has it): the client address is that many entries from the right of
 * X-Forwarded-For, so entries the client wrote itself are never taken. Fastify 5.12 stopped
 * honouring a bare number (it now trusts nothing), hence the function.
 */
function trustProxyOption(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust
  return (_address, hop) => hop < trust
}

function loggerOptions(config: ServiceConfig, service: string): FastifyServerOptions['logger'] {
  const pretty = config.logFormat === 'pretty' && !config.logDestination
  return {
    level: config.logLevel,
    base: { service },
    redact,
    ...(config.logDestination ? { stream: config.logDestination } : {}),
    // A person at a terminal reads one line per event (pino-pretty, in pino's worker thread).
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,reqId' } } }
      : {}),
    serializers: {
      req: (request: { method: string; url: string; ip?: string; headers: Record<string, unknown>; id?: string }) => ({
        method: request.method,
        url: redactedUrl(request.url),
        ip: request.ip,
        userAgent: request.headers['user-agent'],
        clientRequestId: request.headers['x-request-id'],
      }),
    },
  }
}

/**
 * The common frame of both services: HTTP conventions, authentication and the cookie
 * endpoints, health, then the service's surfaces. Resources passed in are shared and stay
 * open when the app closes; otherwise the app opens its own and closes them with itself.
 */
export async function buildServiceApp(config: ServiceConfig, definition: ServiceDefinition, shared?: Resources): Promise<FastifyInstance> {
  const resources = shared ?? (await openResources(config))
  const timeouts = config.httpTimeouts ?? DEFAULT_HTTP_TIMEOUTS
  const app = Fastify({
    logger: loggerOptions(config, definition.name),
    bodyLimit: BODY_LIMIT,
    // Headers and whole requests are bounded in time (slowloris, trickled bodies), checked at least
    // once a second rather than Node's default thirty.
    requestTimeout: timeouts.requestMs,
    http: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    },
    trustProxy: trustProxyOption(config.trustProxy),
    // The id in logs and the audit log is always ours; a caller's x-request-id is logged beside it.
    requestIdHeader: false,
    genReqId: () => randomUUID(),
    childLoggerFactory: lazyRequestLogger,
    logController: new OneLinePerRequest(['info', 'debug', 'trace'].includes(config.logLevel)),
    frameworkErrors(error, request: FastifyRequest, reply: FastifyReply) {
      if (definition.routerError?.(error, request, reply)) return
      const body = routerErrorBody(error, request)
      reply.code(body.statusCode).send(body)
    },
    ...(definition.lenientPaths ? { routerOptions: { caseSensitive: false, ignoreTrailingSlash: true } } : {}),
    ajv: {
      // Unknown body fields are refused (400), never silently dropped or stored.
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true },
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  if (!shared) app.addHook('onClose', async () => resources.close())
  app.addHook('onRequest', refuseDeclaredOversizedBodies)
  if (config.trustProxy === true) {
    app.log.warn(
      "TRUST_PROXY=true believes every X-Forwarded-For entry, so any client can choose its address (rate limits, audit IPs): set the number of proxy hops or the proxies' addresses instead",
    )
  }
  const configuredUrl =
    definition.name === 'platform' ? config.publicUrls?.platform : definition.name === 'product' ? config.publicUrls?.product : undefined
  app.decorate('publicBaseUrl', (request: FastifyRequest) => configuredUrl ?? `${request.protocol}://${request.host}`)
  app.decorate('database', resources.database)
  app.decorate('jobs', resources.jobs)

  await app.register(httpConventions, {
    title: definition.title,
    description: definition.description,
    rateLimit: config.rateLimit,
    sharedCounters: resources.shared && { redis: resources.shared.redis, nameSpace: resources.shared.nameSpace },
    cors: { allowedOrigins: config.cookies.allowedOrigins },
    publicUrl: configuredUrl,
  })
  if (config.metricsPort !== undefined) await app.register(requestMetricsPlugin, { service: definition.name })
  await app.register(authPlugin, {
    auth: config.auth,
    cookies: config.cookies,
    database: resources.database,
    signingKeys: resources.signingKeys,
    sessions: resources.sessions,
    publicPrefixes: [API_REFERENCE_PREFIX],
    enforcePlans: config.billing !== undefined,
    product: definition.name === 'product' ? 'product' : 'platform',
  })
  await app.register(apiReferencePlugin)
  await app.register(cookieRoutes)
  await app.register(healthRoutes, {
    service: definition.name,
    probes: definition.probes
      ? { checkDatabase: () => resources.database.ping(), checkJobQueue: () => resources.checkJobQueue() }
      : undefined,
  })
  const storage = createStorageMaintenance({
    database: resources.database,
    jobs: resources.jobs,
    retention: config.retention ?? DEFAULT_RETENTION_CONFIG,
    log: app.log.child({ component: 'storage' }),
  })
  app.addHook('onReady', () => storage.start())
  await definition.surfaces(app)
  return app
}
