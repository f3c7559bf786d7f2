import { BadRequestError } from '@svc/http'
import { isObject, text, type JsonObject } from '../event.js'

export const deployStatuses = ['queued', 'pending', 'in_progress', 'success', 'failure', 'error', 'inactive'] as const
export type DeployStatus = (typeof deployStatuses)[number]
/** A release, a configuration change (flags, settings) without a release, or a return to an earlier version. */
export const deployKinds = ['deploy', 'config', 'rollback'] as const
export type DeployKind = (typeof deployKinds)[number]

/** One deploy, from whichever pipeline sent it. */
export interface DeployInput {
  source: 'generic' | 'github' | 'pagerduty'
  kind: DeployKind
  service: string
  environment: string | null
  version: string | null
  commitSha: string | null
  repository: string | null
  url: string | null
  status: DeployStatus
  startedAt: Date | null
  finishedAt: Date | null
}

/** Clocks drift; a deploy dated further ahead than this is a wrong clock or a forged order. */
const FUTURE_TOLERANCE_MS = 5 * 60_000

/** An ISO 8601 time the sender gave (null when none), refused when unreadable or too far ahead. */
export function time(value: unknown, field: string): Date | null {
  const given = text(value)
  if (given === undefined) return null
  const parsed = new Date(given)
  if (Number.isNaN(parsed.getTime())) throw new BadRequestError(`${field} is not a date: send ISO 8601`)
  if (parsed.getTime() > Date.now() + FUTURE_TOLERANCE_MS) throw new BadRequestError(`${field} is more than 5 minutes in the future`)
  return parsed
}

export function kind(value: unknown): DeployKind {
  const given = text(value)?.toLowerCase() ?? 'deploy'
  if (!(deployKinds as readonly string[]).includes(given)) throw new BadRequestError(`kind must be one of ${deployKinds.join(', ')}`)
  return given as DeployKind
}

export function status(value: unknown): DeployStatus {
  const given = text(value)?.toLowerCase() ?? 'success'
  if (!(deployStatuses as readonly string[]).includes(given))
    throw new BadRequestError(`status must be one of ${deployStatuses.join(', ')}`)
  return given as DeployStatus
}

/**
 * GitHub's `deployment_status` webhook: the state, the deployment's environment, sha and ref,
 * the repository; the service is `deployment.payload.service` when the workflow sets it, else the
 * repository's name.
 */
function readGitHub(body: JsonObject, deploymentStatus: JsonObject): DeployInput {
  const deployment = isObject(body.deployment) ? body.deployment : {}
  const repository = isObject(body.repository) ? body.repository : {}
  const payload = isObject(deployment.payload) ? deployment.payload : {}
  const service = text(payload.service) ?? text(repository.name)
  if (!service) throw new BadRequestError('a GitHub deployment_status needs repository.name or deployment.payload.service')
  return {
    source: 'github',
    kind: kind(payload.kind),
    service,
    environment: text(deploymentStatus.environment) ?? text(deployment.environment) ?? null,
    version: text(payload.version) ?? text(deployment.ref) ?? null,
    commitSha: text(deployment.sha) ?? null,
    repository: text(repository.full_name) ?? null,
    url: text(deploymentStatus.environment_url) ?? text(deploymentStatus.target_url) ?? null,
    status: status(deploymentStatus.state),
    startedAt: time(deployment.created_at, 'deployment.created_at'),
    finishedAt: time(deploymentStatus.created_at, 'deployment_status.created_at'),
  }
}

/**
 * A deploy event: GitHub's `deployment_status` payload, or the generic shape
 * `{service, kind, environment, version, commit, repository, url, status, startedAt, finishedAt}`
 * (only `service` is required; `kind` defaults to deploy, `status` to success).
 */
export function readDeploy(body: unknown): DeployInput {
  if (!isObject(body)) throw new BadRequestError('the body must be a JSON object')
  if (isObject(body.deployment_status)) return readGitHub(body, body.deployment_status)
  const service = text(body.service)
  if (!service) throw new BadRequestError('a deploy event needs `service`')
  return {
    source: 'generic',
    kind: kind(body.kind),
    service,
    environment: text(body.environment) ?? null,
    version: text(body.version) ?? null,
    commitSha: text(body.commit) ?? text(body.commitSha) ?? null,
    repository: text(body.repository) ?? null,
    url: text(body.url) ?? null,
    status: status(body.status),
    startedAt: time(body.startedAt, 'startedAt'),
    finishedAt: time(body.finishedAt, 'finishedAt'),
  }
}
