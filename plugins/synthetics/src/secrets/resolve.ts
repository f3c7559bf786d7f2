import { SECRET_REFERENCE, filledRequest, type HttpRequest, type MultiStepRequest, type RunnableCheck } from '@svc/check-runner'
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
  const names = new Set(requestsOf(check.kind, check.request).flatMap((request) => [...secretNames(request)]))
  if (names.size === 0) return unfilled
  const sealed = await sealedSecrets(db, check.organizationId, [...names])
  const values = new Map(sealed.map((row) => [row.name, sealer.open(check.organizationId, row.name, row.sealed)]))
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
