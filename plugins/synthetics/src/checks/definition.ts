import { Value } from 'typebox/value'
import type { TSchema } from 'typebox'
import {
  BrowserRequest,
  DnsRequest,
  HeartbeatRequest,
  HttpRequest,
  MultiStepRequest,
  SOURCES_OF_KIND,
  VARIABLE_REFERENCE,
  TcpRequest,
  TlsRequest,
  assertionProblem,
  patternOf,
  scriptSecretNames,
  type Assertion,
  type CheckKind,
} from '@svc/check-runner'
import type { Executor, Json } from '@svc/db'
import { BudgetExceededError, invalidField } from '@svc/http'
import { checkTarget, TargetRefused, TargetUnresolved, type OutboundPolicy } from '@svc/outbound'
import type { CheckFields } from '../queries/checks.js'
import { browserRunsScheduled, MONTH_SECONDS } from '../queries/checks.js'
import { relayRegions } from '../queries/relays.js'
import { secretNames } from '../secrets/resolve.js'
import { sealedSecrets } from '../queries/secrets.js'

const requestSchemas: Record<CheckKind, TSchema> = {
  http: HttpRequest,
  multistep: MultiStepRequest,
  browser: BrowserRequest,
  tcp: TcpRequest,
  dns: DnsRequest,
  tls: TlsRequest,
  heartbeat: HeartbeatRequest,
}

/** What a check's definition needs to be checked against, beyond its own fields. */
export interface DefinitionContext {
  db: Executor
  organizationId: string
  serviceRegion: string
  /** Whether this service's own region runs browser checks (Chromium is where it is configured). */
  serviceHasBrowser: boolean
  /** The browser runs an organization's checks may be scheduled for in 30 days. */
  browserRunsPerMonth: number
  /** The check being changed: its own runs are not counted twice against the limit. */
  checkId?: string
  policy: OutboundPolicy
  /** The ids among `ids` that are not status page components of the organization. */
  unknownComponents: (db: Executor, organizationId: string, ids: string[]) => Promise<string[]>
  /** Whether an escalation policy of the organization has this id. */
  policyExists: (db: Executor, organizationId: string, policyId: string) => Promise<boolean>
}

/** The request, valid for its kind, or a 400 naming the first wrong field (`request/url`, `request/port`). */
function requestOfKind(kind: CheckKind, request: unknown): Json {
  const schema = requestSchemas[kind]
  const [first] = Value.Errors(schema, request)
  if (first) {
    const path = first.instancePath ? `request${first.instancePath}` : 'request'
    throw invalidField(path, `${first.message} (for a ${kind} check)`)
  }
  return request as Json
}

function checkAssertions(kind: Exclude<CheckKind, 'heartbeat'>, assertions: readonly Assertion[] | undefined, at = 'request'): void {
  for (const [index, assertion] of (assertions ?? []).entries()) {
    if (!SOURCES_OF_KIND[kind].has(assertion.source))
      throw invalidField(`${at}/assertions/${index}/source`, `a ${kind} check cannot assert on ${assertion.source}`)
    const problem = assertionProblem(assertion)
    if (problem) {
      const [field, ...words] = problem.split(': ')
      throw invalidField(`${at}/assertions/${index}/${field}`, words.join(': '))
    }
  }
}

/** An HTTP request's URL (`{{…}}` references read as a placeholder), host and assertions, and the secrets it names. */
async function checkHttpRequest(http: HttpRequest, at: string, context: DefinitionContext, kind: 'http' | 'multistep'): Promise<void> {
  const url = http.url.replace(/\{\{(?:secret:)?[A-Za-z0-9_]+\}\}/g, 'placeholder')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw invalidField(`${at}/url`, 'must be an absolute http or https URL')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidField(`${at}/url`, 'must be an http or https URL')
  // A host a variable names is known only when the check runs: the runner checks each address it connects to.
  if (!/^[a-z]+:\/\/[^/?#]*\{\{[A-Za-z0-9_]+\}\}/i.test(http.url)) await checkHost(`${at}/url`, url, context.policy)
  checkAssertions(kind, http.assertions, at)
  await checkSecretsExist([...secretNames(http)], at, context)
}

/** Each step of a multi-step check: its request, what it extracts, and only variables an earlier step extracts. */
async function checkSteps(request: MultiStepRequest, context: DefinitionContext): Promise<void> {
  const defined = new Set<string>()
  for (const [index, step] of request.steps.entries()) {
    const at = `request/steps/${index}`
    for (const text of [step.url, ...Object.values(step.headers ?? {}), step.body ?? ''])
      for (const [, name] of text.matchAll(VARIABLE_REFERENCE))
        if (!defined.has(name!)) throw invalidField(at, `uses {{${name}}}, which no step before it extracts`)
    await checkHttpRequest(step, at, context, 'multistep')
    for (const [position, extraction] of (step.extract ?? []).entries()) {
      const field = `${at}/extract/${position}/property`
      if (extraction.source === 'jsonPath' && !extraction.property.startsWith('$')) throw invalidField(field, 'a JSONPath starts with $')
      if (extraction.source === 'body') {
        let groups: number
        try {
          groups = patternOf(extraction.property).matcher('').groupCount()
        } catch {
          throw invalidField(field, 'not a valid regular expression (RE2 syntax: no lookaround, no backreferences)')
        }
        if (groups < 1) throw invalidField(field, 'needs a group, (…), around the value to take')
      }
      defined.add(extraction.variable)
    }
  }
}

/**
 * A target must not point into the service's own network unless allowed (the outbound rule);
 * a name that does not resolve yet is accepted (the check will say so when it runs).
 */
async function checkHost(field: string, url: string, policy: OutboundPolicy): Promise<void> {
  try {
    await checkTarget(url, policy)
  } catch (error) {
    if (error instanceof TargetRefused && !(error instanceof TargetUnresolved)) throw invalidField(field, error.message)
  }
}

const hostUrl = (host: string) => `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}/`

async function checkRequest(kind: CheckKind, request: Json, context: DefinitionContext): Promise<void> {
  switch (kind) {
    case 'http':
      return checkHttpRequest(request as unknown as HttpRequest, 'request', context, 'http')
    case 'multistep':
      return checkSteps(request as unknown as MultiStepRequest, context)
    case 'tcp':
    case 'tls': {
      const target = request as unknown as TcpRequest | TlsRequest
      await checkHost('request/host', hostUrl(target.host), context.policy)
      if (kind === 'tcp') checkAssertions('tcp', (target as TcpRequest).assertions)
      return
    }
    case 'dns': {
      const dns = request as unknown as DnsRequest
      if (dns.nameserver) {
        const host =
          /^\[([^\]]+)\]/.exec(dns.nameserver)?.[1] ??
          (dns.nameserver.split(':').length === 2 ? dns.nameserver.split(':')[0]! : dns.nameserver)
        await checkHost('request/nameserver', hostUrl(host), context.policy)
      }
      checkAssertions('dns', dns.assertions)
      return
    }
    case 'browser':
      return checkScript(request as unknown as BrowserRequest, context)
    case 'heartbeat':
      return
  }
}

/**
 * A script must compile as the body it runs as (sandbox/browser-script.mjs); compiling runs none
 * of it. The secrets it names must exist.
 */
async function checkScript(request: BrowserRequest, context: DefinitionContext): Promise<void> {
  const AsyncFunction = (async () => undefined).constructor as new (...parameters: string[]) => unknown
  try {
    new AsyncFunction('page', 'context', 'expect', 'test', 'step', 'secrets', request.script)
  } catch (error) {
    throw invalidField('request/script', `does not compile: ${(error as Error).message}`)
  }
  await checkSecretsExist([...scriptSecretNames(request.script)], 'request/script', context)
}

/** Each secret named must be one of the organization's. */
async function checkSecretsExist(names: readonly string[], at: string, context: DefinitionContext): Promise<void> {
  const known = new Set((await sealedSecrets(context.db, context.organizationId, names)).map((row) => row.name))
  const missing = names.find((name) => !known.has(name))
  if (missing) throw invalidField(at, `refers to the secret ${missing}, which does not exist`)
}

/** Browser checks run longer, less often and fewer at a time than the other kinds: their runs hold a Chromium. */
export const BROWSER_MIN_FREQUENCY_SECONDS = 60
export const BROWSER_MAX_TIMEOUT_MS = 60_000
export const OTHER_MAX_TIMEOUT_MS = 30_000
const BROWSER_MAX_RETRIES = 2

function checkBrowserTiming(fields: CheckFields): void {
  if (fields.kind !== 'browser') {
    if (fields.timeoutMs > OTHER_MAX_TIMEOUT_MS)
      throw invalidField('timeoutMs', `must be at most ${OTHER_MAX_TIMEOUT_MS} for a ${fields.kind} check`)
    return
  }
  if (fields.frequencySeconds < BROWSER_MIN_FREQUENCY_SECONDS)
    throw invalidField('frequencySeconds', `must be at least ${BROWSER_MIN_FREQUENCY_SECONDS} for a browser check`)
  if (fields.timeoutMs > BROWSER_MAX_TIMEOUT_MS)
    throw invalidField('timeoutMs', `must be at most ${BROWSER_MAX_TIMEOUT_MS} for a browser check`)
  if (fields.retries > BROWSER_MAX_RETRIES) throw invalidField('retries', `must be at most ${BROWSER_MAX_RETRIES} for a browser check`)
}

/**
 * An organization's browser checks, this one with them, may be scheduled for at most
 * `browserRunsPerMonth` runs in 30 days (a run per region per period): past it, 402 as the AI
 * budget's. A paused check counts nothing; resuming one is checked again.
 */
export async function checkBrowserBudget(
  fields: Pick<CheckFields, 'kind' | 'paused' | 'regions' | 'frequencySeconds'>,
  context: Pick<DefinitionContext, 'db' | 'organizationId' | 'browserRunsPerMonth' | 'checkId'>,
): Promise<void> {
  if (fields.kind !== 'browser' || fields.paused) return
  const others = await browserRunsScheduled(context.db, context.organizationId, context.checkId)
  const these = fields.regions.length * Math.ceil(MONTH_SECONDS / fields.frequencySeconds)
  if (others + these > context.browserRunsPerMonth)
    throw new BudgetExceededError(
      `browser checks of this organization would run ${others + these} times in 30 days (this one ${these}); the limit is ${context.browserRunsPerMonth}: run it less often, in fewer regions, or pause another`,
    )
}

/**
 * Each region must have a runner: this service's own, or a relay of the organization; for a
 * browser check, one with Chromium (a relay says so when it calls).
 */
async function checkRegions(kind: CheckKind, regions: readonly string[], context: DefinitionContext): Promise<void> {
  const relays = await relayRegions(context.db, context.organizationId)
  const index = regions.findIndex((region) => region !== context.serviceRegion && !relays.has(region))
  if (index >= 0)
    throw invalidField(
      `regions/${index}`,
      `no runner serves ${regions[index]}: use ${context.serviceRegion} or a region one of your relays runs`,
    )
  if (kind !== 'browser') return
  const browserless = regions.findIndex((region) =>
    region === context.serviceRegion ? !context.serviceHasBrowser : !relays.get(region)?.browser,
  )
  if (browserless >= 0)
    throw invalidField(
      `regions/${browserless}`,
      regions[browserless] === context.serviceRegion
        ? `this service runs no browser check in ${context.serviceRegion}: Chromium is not installed where SYNTHETICS_CHROMIUM_PATH says`
        : `no relay of ${regions[browserless]} has said it has Chromium: install it where the relay runs (RELAY_CHROMIUM_PATH)`,
    )
}

/** Validates a whole definition (create) or the changed part of one merged with the rest (update). */
export async function checkDefinition(fields: CheckFields, context: DefinitionContext): Promise<CheckFields> {
  const kind = fields.kind as CheckKind
  const request = requestOfKind(kind, fields.request)
  await checkRequest(kind, request, context)
  checkBrowserTiming(fields)
  if (fields.timeoutMs >= fields.frequencySeconds * 1000) throw invalidField('timeoutMs', 'must be shorter than the frequency')
  if (fields.degradedMs !== null && fields.degradedMs >= fields.timeoutMs) throw invalidField('degradedMs', 'must be below timeoutMs')
  // A heartbeat is judged by the service itself: it has one region, the service's own.
  const regions = kind === 'heartbeat' ? [context.serviceRegion] : fields.regions
  await checkRegions(kind, regions, context)
  await checkBrowserBudget({ ...fields, regions }, context)
  if (fields.escalationPolicyId && !(await context.policyExists(context.db, context.organizationId, fields.escalationPolicyId)))
    throw invalidField('alertRule/escalationPolicyId', 'no escalation policy of this organization has this id')
  const unknown = await context.unknownComponents(context.db, context.organizationId, fields.statusComponentIds)
  if (unknown.length > 0)
    throw invalidField(
      `statusComponentIds/${fields.statusComponentIds.indexOf(unknown[0]!)}`,
      'no status page component of this organization has this id',
    )
  return { ...fields, request, regions }
}
