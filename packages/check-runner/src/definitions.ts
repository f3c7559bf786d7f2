import { Type, type Static } from 'typebox'

// What a check does, by kind: the shapes the API takes and a relay receives, one definition for
// both so a relay runs exactly what the service validated. Names follow Checkly's where it has
// one (assertion sources and comparisons, in camelCase).

export const CHECK_KINDS = ['http', 'multistep', 'browser', 'tcp', 'dns', 'tls', 'heartbeat'] as const
export type CheckKind = (typeof CHECK_KINDS)[number]

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SRV', 'CAA'] as const

export const ASSERTION_SOURCES = ['statusCode', 'responseTime', 'header', 'jsonPath', 'body'] as const
export const COMPARISONS = [
  'equals',
  'notEquals',
  'greaterThan',
  'lessThan',
  'contains',
  'notContains',
  'isEmpty',
  'notEmpty',
  'matches',
] as const

export const Assertion = Type.Object(
  {
    source: Type.Enum(ASSERTION_SOURCES, {
      description:
        'statusCode, responseTime (ms), header (property: its name), jsonPath (property: a JSONPath such as $.data.status), body (the text)',
    }),
    property: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    comparison: Type.Enum(COMPARISONS, { description: 'matches: target is a regular expression' }),
    target: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
)
export type Assertion = Static<typeof Assertion>

const Assertions = Type.Array(Assertion, { maxItems: 30 })

export const HttpRequest = Type.Object(
  {
    method: Type.Optional(Type.Enum(HTTP_METHODS, { description: 'Default GET' })),
    url: Type.String({ minLength: 8, maxLength: 2000, description: 'An http(s) URL; may hold {{secret:NAME}}' }),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$" }), Type.String({ maxLength: 4000 }), {
        description: 'Values may hold {{secret:NAME}} references',
        maxProperties: 50,
      }),
    ),
    body: Type.Optional(Type.String({ maxLength: 65_536 })),
    followRedirects: Type.Optional(Type.Boolean({ description: 'Default true' })),
    assertions: Type.Optional(Assertions),
  },
  { additionalProperties: false },
)
export type HttpRequest = Static<typeof HttpRequest>

/** A variable's name, as a later step refers to it: `{{NAME}}` (a secret is `{{secret:NAME}}`). */
export const VARIABLE_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,63}$'
/** References to variables in a step's URL, header values and body. */
export const VARIABLE_REFERENCE = /\{\{([A-Za-z_][A-Za-z0-9_]{0,63})\}\}/g

export const Extraction = Type.Object(
  {
    variable: Type.String({ pattern: VARIABLE_NAME, description: 'The name later steps use: {{NAME}}' }),
    source: Type.Enum(['jsonPath', 'header', 'body'] as const, {
      description:
        'jsonPath (property: a JSONPath), header (property: its name), body (property: a regular expression whose first group is taken)',
    }),
    property: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
)
export type Extraction = Static<typeof Extraction>

export const ApiStep = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Named in results and in a failure' }),
    ...HttpRequest.properties,
    url: Type.String({ minLength: 8, maxLength: 2000, description: 'An http(s) URL; may hold {{secret:NAME}} and {{VARIABLE}}' }),
    extract: Type.Optional(Type.Array(Extraction, { maxItems: 10, description: 'Values this step hands to the steps after it' })),
  },
  { additionalProperties: false },
)
export type ApiStep = Static<typeof ApiStep>

export const MultiStepRequest = Type.Object(
  {
    steps: Type.Array(ApiStep, {
      minItems: 1,
      maxItems: 10,
      description: 'Requests made in order within the check’s timeout; the first that fails fails the run',
    }),
  },
  { additionalProperties: false },
)
export type MultiStepRequest = Static<typeof MultiStepRequest>

export const TcpRequest = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    assertions: Type.Optional(Assertions),
  },
  { additionalProperties: false },
)
export type TcpRequest = Static<typeof TcpRequest>

export const DnsRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253 }),
    recordType: Type.Enum(DNS_RECORD_TYPES),
    expectedValues: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 })),
    nameserver: Type.Optional(
      Type.String({ maxLength: 300, description: 'host or host:port of the server to ask; unset: the system resolver' }),
    ),
    assertions: Type.Optional(Assertions),
  },
  { additionalProperties: false },
)
export type DnsRequest = Static<typeof DnsRequest>

export const TlsRequest = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Default 443' })),
    servername: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
    daysBeforeExpiry: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 365, description: 'Fails when the certificate expires sooner; default 14' }),
    ),
    allowUntrusted: Type.Optional(
      Type.Boolean({ description: 'Checks only the expiry of a certificate no trusted CA signed (self-signed); default false' }),
    ),
  },
  { additionalProperties: false },
)
export type TlsRequest = Static<typeof TlsRequest>

/** A browser check's script (issue 59): Playwright, as a `@playwright/test` test's body. */
export const BrowserRequest = Type.Object(
  {
    script: Type.String({
      minLength: 1,
      maxLength: 65_536,
      description:
        'The body of an async function given `page`, `context`, `expect` (@playwright/test’s), `test.step` and `secrets` (the check secrets it names: `secrets.NAME`); no imports. It fails by throwing (a failed expect)',
    }),
    screenshotOnSuccess: Type.Optional(Type.Boolean({ description: 'A screenshot is kept on failure always; on success only when true' })),
    viewport: Type.Optional(
      Type.Object(
        { width: Type.Integer({ minimum: 320, maximum: 3840 }), height: Type.Integer({ minimum: 240, maximum: 2160 }) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type BrowserRequest = Static<typeof BrowserRequest>

/** A browser script's secrets, by name: `secrets.NAME` or `secrets['NAME']`, named literally. */
export const SCRIPT_SECRET_REFERENCE = /\bsecrets(?:\.([A-Za-z_][A-Za-z0-9_]{0,63})\b|\[\s*(['"`])([A-Za-z_][A-Za-z0-9_]{0,63})\2\s*\])/g

/** The names of the secrets a browser script refers to. */
export function scriptSecretNames(script: string): Set<string> {
  return new Set([...script.matchAll(SCRIPT_SECRET_REFERENCE)].map((match) => (match[1] ?? match[3])!))
}

/** A browser check as a runner gets it: its script, and the values of the secrets it names (never stored). */
export type RunnableBrowserRequest = BrowserRequest & { secrets?: Record<string, string> }

/** How late a heartbeat's ping may be when its check does not say. */
export const DEFAULT_GRACE_SECONDS = 60

export const HeartbeatRequest = Type.Object(
  {
    graceSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'How late a ping may be; default 60' })),
  },
  { additionalProperties: false },
)
export type HeartbeatRequest = Static<typeof HeartbeatRequest>

/** Which assertion sources each kind can answer: anything else is an assertion on an unknown field. */
export const SOURCES_OF_KIND: Record<Exclude<CheckKind, 'heartbeat'>, ReadonlySet<Assertion['source']>> = {
  http: new Set(ASSERTION_SOURCES),
  multistep: new Set(ASSERTION_SOURCES),
  // A browser check asserts in its script, with `expect`.
  browser: new Set(),
  tcp: new Set(['responseTime']),
  dns: new Set(['responseTime', 'body']),
  tls: new Set(),
}

/** A check as a runner needs it: its request, with secrets already put in. */
export type RunnableCheck =
  | { kind: 'http'; request: HttpRequest; timeoutMs: number; degradedMs: number | null; retries: number }
  | { kind: 'multistep'; request: MultiStepRequest; timeoutMs: number; degradedMs: number | null; retries: number }
  | { kind: 'browser'; request: RunnableBrowserRequest; timeoutMs: number; degradedMs: number | null; retries: number }
  | { kind: 'tcp'; request: TcpRequest; timeoutMs: number; degradedMs: number | null; retries: number }
  | { kind: 'dns'; request: DnsRequest; timeoutMs: number; degradedMs: number | null; retries: number }
  | { kind: 'tls'; request: TlsRequest; timeoutMs: number; degradedMs: number | null; retries: number }

export const RESULT_STATUSES = ['passing', 'degraded', 'failing'] as const
export type ResultStatus = (typeof RESULT_STATUSES)[number]

export const Timings = Type.Object(
  {
    dns: Type.Optional(Type.Number({ minimum: 0 })),
    connect: Type.Optional(Type.Number({ minimum: 0 })),
    tls: Type.Optional(Type.Number({ minimum: 0 })),
    firstByte: Type.Optional(Type.Number({ minimum: 0 })),
    total: Type.Number({ minimum: 0 }),
  },
  { additionalProperties: false, description: 'Milliseconds' },
)
export type Timings = Static<typeof Timings>

export const AssertionOutcome = Type.Object(
  {
    source: Type.Enum(ASSERTION_SOURCES),
    property: Type.Optional(Type.String()),
    comparison: Type.Enum(COMPARISONS),
    target: Type.Optional(Type.String()),
    actual: Type.Union([Type.String(), Type.Null()]),
    passed: Type.Boolean(),
  },
  { additionalProperties: false },
)
export type AssertionOutcome = Static<typeof AssertionOutcome>

export const StepResult = Type.Object(
  {
    name: Type.String(),
    status: Type.Enum(['passing', 'failing'] as const),
    statusCode: Type.Optional(Type.Integer()),
    timings: Timings,
    assertions: Type.Array(AssertionOutcome, { maxItems: 30 }),
    error: Type.Optional(Type.String({ maxLength: 2000 })),
    extracted: Type.Array(Type.String(), { description: 'The variables it set (their names: values may be secret)' }),
  },
  { additionalProperties: false },
)
export type StepResult = Static<typeof StepResult>

/** A screenshot's PNG as base64 at most (3 MB of PNG: a full HD page is well below). */
export const MAX_SCREENSHOT_BASE64 = 4_194_304

export const AttemptResult = Type.Object(
  {
    status: Type.Enum(RESULT_STATUSES),
    startedAt: Type.String({ format: 'date-time' }),
    timings: Timings,
    statusCode: Type.Optional(Type.Integer()),
    assertions: Type.Array(AssertionOutcome, { maxItems: 30 }),
    error: Type.Optional(Type.String({ maxLength: 2000 })),
    details: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'What the kind observed: DNS answers, certificate expiry' }),
    ),
    steps: Type.Optional(Type.Array(StepResult, { maxItems: 10, description: 'A multi-step check: each step run, in order' })),
    screenshot: Type.Optional(
      Type.String({
        maxLength: MAX_SCREENSHOT_BASE64,
        contentEncoding: 'base64',
        description:
          'A browser check: the page as a PNG, base64, where a relay sends it and a test run answers it; stored results link to it instead (`screenshotUrl`)',
      }),
    ),
  },
  { additionalProperties: false },
)
export type AttemptResult = Static<typeof AttemptResult>

/** Secret references in a request's URL, headers and body: `{{secret:NAME}}`. */
export const SECRET_REFERENCE = /\{\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}\}/g
