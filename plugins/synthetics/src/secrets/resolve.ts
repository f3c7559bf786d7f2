import {
  SECRET_REFERENCE,
  filledRequest,
  scriptSecretNames,
  type BrowserRequest,
  type HttpRequest,
  type MultiStepRequest,
  type RunnableCheck,
} from '@svc/check-runner'
import type { Executor } from '@svc/db'
import type { CheckRow } from '../queries/checks.js'
import { sealedSecrets } from '../queries/secrets.js'
import type { SecretSealer } from '@svc/config'

/** The names of the secrets an HTTP request (or a multi-step check's step) refers to, in its URL, header values and body. */
export function secretNames(request: Pick<HttpRequest, 'url' | 'headers' | 'body'>): Set<string> {
  const texts = [request.url, ...Object.values(request.headers ?? {}), request.body ?? '']
  return new Set(texts.flatMap((text) => [...text.matchAll(SECRET_REFERENCE)].map((match) => match[1]!)))
}

/** The requests of a check that may refer to secrets: an HTTP check's, each step of a multi-step check. */
export function requestsOf(kind: string, request: unknown): Array<Pick<HttpRequest, 'url' | 'headers' | 'body'>> {
  if (kind === 'http') return [request as HttpRequest]
  if (kind === 'multistep') return (request as MultiStepRequest).steps
  return []
}

/** Every secret a check refers to: in its requests' URLs, header values and bodies, or as `secrets.NAME` in its script. */
export function secretsOfCheck(kind: string, request: unknown): Set<string> {
  if (kind === 'browser') return scriptSecretNames((request as BrowserRequest).script)
  return new Set(requestsOf(kind, request).flatMap((one) => [...secretNames(one)]))
}

/** What of a check its run needs. */
export type RunnableFields = Pick<CheckRow, 'organizationId' | 'kind' | 'request' | 'timeoutMs' | 'degradedMs' | 'retries'>

/** A reference to a secret that no longer exists fails the run with this message. */
export class UnknownSecret extends Error {}

/**
 * The check as a runner needs it, its secret references replaced by their values: done where
 * the check runs (this service, or just before a relay is handed its run), never stored.
 */
export async function runnableCheck(db: Executor, sealer: SecretSealer, check: RunnableFields): Promise<RunnableCheck> {
  const common = { timeoutMs: check.timeoutMs, degradedMs: check.degradedMs, retries: check.retries }
  const unfilled = { kind: check.kind, request: check.request, ...common } as RunnableCheck
  const names = secretsOfCheck(check.kind, check.request)
  if (names.size === 0) return unfilled
  const sealed = await sealedSecrets(db, check.organizationId, [...names])
  const values = new Map(sealed.map((row) => [row.name, sealer.open(check.organizationId, row.name, row.sealed)]))
  if (unfilled.kind === 'browser') {
    // A script is code: its secrets are handed over as values, never written into its text.
    const missing = [...names].find((name) => !values.has(name))
    if (missing) throw new UnknownSecret(`the secret ${missing} does not exist`)
    return { ...unfilled, request: { ...unfilled.request, secrets: Object.fromEntries(values) } }
  }
  const fill = (text: string) =>
    text.replace(SECRET_REFERENCE, (_match, name: string) => {
      const value = values.get(name)
      if (value === undefined) throw new UnknownSecret(`the secret ${name} does not exist`)
      return value
    })
  if (unfilled.kind === 'multistep')
    return { ...unfilled, request: { steps: unfilled.request.steps.map((step) => filledRequest(step, fill)) } }
  if (unfilled.kind === 'http') return { ...unfilled, request: filledRequest(unfilled.request, fill) }
  return unfilled
}
