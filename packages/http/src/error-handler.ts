import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { STATUS_CODES } from 'node:http'
import type { ErrorBody } from './schemas.js'

interface PostgresError {
  code?: string
  constraint?: string
}

interface ValidationIssue {
  keyword?: string
  instancePath?: string
  params?: { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[]; allowedValue?: unknown }
  message?: string
}

/** The body types a route may be sent, in the order the answer names them. */
const BODY_TYPES = ['application/json', 'application/scim+json', 'application/x-www-form-urlencoded']

/**
 * Ajv's words for a value outside a list ("must be equal to one of the allowed values", or for a
 * union of literals one "must be equal to constant" per literal and "must match a schema in
 * anyOf") made into one issue naming the values: `must be one of "a", "b"`.
 */
function namingAllowedValues(issues: ValidationIssue[]): ValidationIssue[] | undefined {
  const oneOf = (values: unknown[]) => `must be one of ${values.map((value) => JSON.stringify(value)).join(', ')}`
  let changed = false
  const out: ValidationIssue[] = []
  for (const issue of issues) {
    if (issue.keyword === 'enum' && issue.params?.allowedValues) {
      out.push({ ...issue, message: oneOf(issue.params.allowedValues) })
      changed = true
      continue
    }
    if (issue.keyword === 'anyOf') {
      // The literals' issues at the same place came just before it.
      const literals = out.filter((earlier) => earlier.keyword === 'const' && earlier.instancePath === issue.instancePath)
      if (literals.length > 0) {
        const values = literals.map((literal) => literal.params?.allowedValue)
        for (const literal of literals) out.splice(out.indexOf(literal), 1)
        out.push({ ...issue, keyword: 'enum', message: oneOf(values) })
        changed = true
        continue
      }
    }
    out.push(issue)
  }
  return changed ? out : undefined
}

/** Stable codes for the errors Fastify and its plugins raise themselves. */
const frameworkCodes = new Map([
  ['FST_ERR_CTP_BODY_TOO_LARGE', 'PAYLOAD_TOO_LARGE'],
  ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 'UNSUPPORTED_MEDIA_TYPE'],
  ['FST_ERR_CTP_EMPTY_JSON_BODY', 'VALIDATION_FAILED'],
  ['FST_ERR_CTP_INVALID_JSON_BODY', 'VALIDATION_FAILED'],
])

/** The messages our constraint triggers raise as check violations (db/migrations). */
const OWN_RULES = new Set(['an organization must keep at least one owner'])

// SQLSTATE class 08 (connection exception), and the server shutting down or starting up (57P01-03).
const UNAVAILABLE_STATES = /^(08...|57P0[123])$/
// What node-postgres and the socket say when the connection is gone or cannot be made.
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|is not currently accepting connections/
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'])

/**
 * The database cannot be reached right now (a failover, a restart, a cut connection): the request
 * may be tried again, so it is a 503 with Retry-After, not a 500 (decision 0013, "Database blips").
 */
export function isDatabaseUnavailable(error: { code?: string; message?: string }): boolean {
  return (
    UNAVAILABLE_STATES.test(error.code ?? '') || UNAVAILABLE_ERRNO.has(error.code ?? '') || UNAVAILABLE_MESSAGES.test(error.message ?? '')
  )
}

function body(statusCode: number, message: string, code: string): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, code }
}

function fieldOf(issue: ValidationIssue, context: string | undefined): string {
  const property = issue.params?.missingProperty ?? issue.params?.additionalProperty
  const pointer = (issue.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.')
  const field = [pointer, property].filter(Boolean).join('.')
  return field || context || 'body'
}

/** Maps any thrown error to the documented error body; 5xx details stay in the log. */
export function toErrorBody(error: FastifyError & PostgresError, request: FastifyRequest): ErrorBody {
  if (error.validation) {
    const named = namingAllowedValues(error.validation as ValidationIssue[])
    const issues = named ?? (error.validation as ValidationIssue[])
    // Fastify's own message, unless a list of allowed values was worded anew: then in its form.
    const message = named
      ? issues.map((issue) => `${error.validationContext ?? 'body'}${issue.instancePath ?? ''} ${issue.message ?? 'is invalid'}`).join(', ')
      : error.message
    return {
      ...body(400, message, 'VALIDATION_FAILED'),
      details: issues.map((issue) => ({
        field: fieldOf(issue, error.validationContext),
        message: issue.params?.additionalProperty ? 'is not allowed' : (issue.message ?? 'is invalid'),
      })),
    }
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    // Say which types the route takes: a client that sent none, or text/plain, learns what to send.
    const accepted = BODY_TYPES.filter((type) => request.server.hasContentTypeParser(type))
    const sent = request.headers['content-type']
    return body(
      415,
      `${sent ? `Content-Type ${sent.split(';')[0]} is not accepted` : 'the body has no Content-Type header'}: send ${accepted.join(' or ')}`,
      'UNSUPPORTED_MEDIA_TYPE',
    )
  }
  if (/^FA?ST_JWT_/.test(error.code ?? '')) {
    // @fastify/jwt's own errors: missing, malformed, expired or untrusted tokens.
    return body(401, error.message, 'UNAUTHORIZED')
  }
  if (error.code === '23505') return body(409, 'the resource already exists', 'CONFLICT')
  if (error.code === '22P02') return body(404, 'resource not found', 'NOT_FOUND')
  // PostgreSQL stores no NUL character in text or jsonb: the input is at fault, not the server.
  if (error.code === '22P05' || error.code === '22021') return body(400, 'text must not contain NUL characters', 'BAD_REQUEST')
  if (error.code === '23503') return body(409, 'a referenced resource does not exist', 'CONFLICT')
  // A check constraint names PostgreSQL's relation and constraint: never shown. Our own
  // constraint triggers raise our own words, which are.
  if (error.code === '23514')
    return body(409, OWN_RULES.has(error.message) ? error.message : 'the change breaks a rule of the stored data', 'CONFLICT')

  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'the database is unavailable')
    return body(503, 'the database is unavailable for a moment: try again', 'DATABASE_UNAVAILABLE')
  }

  const statusCode = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500
  // Our own UpstreamError words what another service answered (a chat test, say): shown.
  if (statusCode === 502 && error.code === 'UPSTREAM_FAILED') {
    request.log.warn({ err: error }, 'an upstream service refused')
    return body(502, error.message, 'UPSTREAM_FAILED')
  }
  // Our own 503s that say a feature is off on this platform (billing, report downloads).
  if (statusCode === 503 && (error.code === 'BILLING_DISABLED' || error.code === 'REPORTS_DISABLED'))
    return body(503, error.message, error.code)
  if (statusCode >= 500) {
    request.log.error({ err: error }, 'request failed')
    return body(statusCode, 'the server could not complete the request', statusCode === 502 ? 'UPSTREAM_FAILED' : 'INTERNAL_ERROR')
  }
  return body(statusCode, error.message, codeOf(error.code, statusCode))
}

function codeOf(code: string | undefined, statusCode: number): string {
  const known = code === undefined ? undefined : frameworkCodes.get(code)
  if (known) return known
  // @fastify/rate-limit throws a plain object with no code.
  if (statusCode === 429) return 'RATE_LIMITED'
  // Our own codes (errors.ts) are plain upper-case words; framework internals (FST_*) are not shown.
  if (code && /^[A-Z][A-Z_]*$/.test(code) && !/^FA?ST_/.test(code)) return code
  return defaultCode(statusCode)
}

function defaultCode(statusCode: number): string {
  return (STATUS_CODES[statusCode] ?? 'ERROR').toUpperCase().replace(/[^A-Z]+/g, '_')
}

/** A URL with the secrets some URLs carry replaced, for logs and answers. */
export function redactedUrl(url: string): string {
  // Credentials that travel in URLs: ingest keys, acknowledgement links and heartbeat push tokens
  // in the path; feed and subscriber tokens, report links' signatures and status page audiences'
  // link tokens in the query.
  return url
    .replace(/(\/(?:ingest|ack|heartbeats)\/)[^/?#]+/gi, '$1[redacted]')
    .replace(/([?&](?:token|signature|audience)=)[^&#]*/gi, '$1[redacted]')
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & PostgresError, request: FastifyRequest, reply: FastifyReply) => {
    const payload = toErrorBody(error, request)
    if (payload.code === 'DATABASE_UNAVAILABLE') reply.header('retry-after', '2')
    return reply.code(payload.statusCode).send(payload)
  })
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(body(404, `route ${request.method} ${redactedUrl(request.url.split('?')[0] ?? '')} not found`, 'NOT_FOUND')),
  )
}
