import { Type, type Static } from 'typebox'
import {
  AttemptResult,
  BrowserRequest,
  CHECK_KINDS,
  DnsRequest,
  HeartbeatRequest,
  HttpRequest,
  MultiStepRequest,
  RESULT_STATUSES,
  TcpRequest,
  TlsRequest,
} from '@svc/check-runner'
import { Timestamp } from '@svc/http'
import type { CheckRow } from './queries/checks.js'
import type { RelayRow } from './queries/relays.js'
import type { CheckJudgement } from './checks/access.js'

/** Where the managed routes live (spec: the synthetics surface's prefix). */
export const MANAGED_BASE = '/api/v1/synthetics/organizations/:orgId'
export const tags = ['synthetics']

export const OrgParams = Type.Object({ orgId: Type.String() })
export const CheckParams = Type.Object({ orgId: Type.String(), checkId: Type.String() })
export const RelayParams = Type.Object({ orgId: Type.String(), relayId: Type.String() })
export const SecretParams = Type.Object({ orgId: Type.String(), name: Type.String({ maxLength: 64 }) })

const Uuid = Type.String({ format: 'uuid' })
const Nullable = <T extends ReturnType<typeof Type.String | typeof Type.Integer>>(schema: T) => Type.Union([schema, Type.Null()])

export const Region = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$',
  description: 'A region name: lower-case letters, digits, hyphens',
})
export const CheckStateSchema = Type.Enum(['unknown', 'passing', 'degraded', 'failing'] as const)
export const ResultStatusSchema = Type.Enum(RESULT_STATUSES)
export const Priority = Type.Enum(['P1', 'P2', 'P3', 'P4', 'P5'] as const)

export const AlertRule = Type.Object(
  {
    failures: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 20, description: 'Consecutive failing runs before a region fails; default 1' }),
    ),
    quorum: Type.Optional(
      Type.Enum(['any', 'majority', 'all'] as const, { description: 'How many regions must fail for the check to fail; default any' }),
    ),
    priority: Type.Optional(Priority),
    escalationPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'The policy its alerts page with; null: unrouted' })),
  },
  { additionalProperties: false },
)

/** Any kind's request; the handler checks it against its kind's schema and names the field. */
export const AnyRequest = Type.Union([HttpRequest, MultiStepRequest, BrowserRequest, TcpRequest, DnsRequest, TlsRequest, HeartbeatRequest])

export const checkFieldsSchema = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  kind: Type.Enum(CHECK_KINDS),
  request: AnyRequest,
  frequencySeconds: Type.Integer({ minimum: 30, maximum: 86_400, description: 'From 30 seconds to 24 hours' }),
  timeoutMs: Type.Optional(
    Type.Integer({ minimum: 100, maximum: 60_000, description: 'Default 10000; at most 30000, or 60000 for a browser check' }),
  ),
  degradedMs: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 60_000 }), Type.Null()], { description: 'Slower than this is degraded' }),
  ),
  regions: Type.Optional(
    Type.Array(Region, { minItems: 1, maxItems: 20, uniqueItems: true, description: 'Default: the service’s own region' }),
  ),
  retries: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 5, description: 'Attempts after a failed one before the run fails; default 0' }),
  ),
  alertRule: Type.Optional(AlertRule),
  statusComponentIds: Type.Optional(
    Type.Array(Uuid, { maxItems: 50, uniqueItems: true, description: 'Status page components that follow the check' }),
  ),
  paused: Type.Optional(Type.Boolean()),
  service: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), Type.Null()], {
      description:
        'The service it belongs to (a catalog key or alias, or a name alerts carry): its failure is an alert of that service, paging the service’s escalation policy when its alert rule names none. Default: none, the alert carries the check’s name',
    }),
  ),
}

const RegionState = Type.Object({
  region: Type.String(),
  status: Type.Enum(['unknown', 'passing', 'degraded', 'failing'] as const),
  lastRunAt: Type.Union([Timestamp, Type.Null()]),
})

export const Check = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    kind: Type.Enum(CHECK_KINDS),
    request: AnyRequest,
    frequencySeconds: Type.Integer(),
    timeoutMs: Type.Integer(),
    degradedMs: Nullable(Type.Integer()),
    regions: Type.Array(Type.String()),
    retries: Type.Integer(),
    alertRule: Type.Object({ failures: Type.Integer(), quorum: Type.String(), priority: Priority, escalationPolicyId: Nullable(Uuid) }),
    statusComponentIds: Type.Array(Uuid),
    paused: Type.Boolean(),
    service: Type.Union([Type.String(), Type.Null()]),
    state: CheckStateSchema,
    stateChangedAt: Timestamp,
    regionStates: Type.Array(RegionState),
    nextDueAt: Type.Union([Timestamp, Type.Null()]),
    lastPingAt: Type.Union([Timestamp, Type.Null()]),
    heartbeatUrl: Type.Optional(
      Type.String({ description: 'Heartbeat checks, when created or their URL replaced: the URL to ping, shown once' }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'SyntheticCheck' },
)

export function checkBody(row: CheckRow, judged: CheckJudgement, heartbeatUrl?: string) {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as (typeof CHECK_KINDS)[number],
    request: row.request as never,
    frequencySeconds: row.frequencySeconds,
    timeoutMs: row.timeoutMs,
    degradedMs: row.degradedMs,
    regions: row.regions,
    retries: row.retries,
    alertRule: {
      failures: row.alertAfterFailures,
      quorum: row.alertQuorum,
      priority: row.alertPriority as 'P1',
      escalationPolicyId: row.escalationPolicyId,
    },
    statusComponentIds: row.statusComponentIds,
    paused: row.paused,
    service: row.service,
    state: judged.state,
    stateChangedAt: row.stateChangedAt.toISOString(),
    regionStates: judged.regions.map((entry) => ({ ...entry, lastRunAt: entry.lastRunAt?.toISOString() ?? null })),
    nextDueAt: row.nextDueAt?.toISOString() ?? null,
    lastPingAt: row.lastPingAt?.toISOString() ?? null,
    ...(heartbeatUrl ? { heartbeatUrl } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

const { screenshot: _inTransit, ...storedAttempt } = AttemptResult.properties
/** An attempt as stored: a browser check's screenshot is a signed link, not the image. */
export const StoredAttempt = Type.Object(
  {
    ...storedAttempt,
    screenshotUrl: Type.Optional(
      Type.String({
        format: 'uri',
        description: 'A browser check’s screenshot (PNG) of this attempt: a signed link, valid an hour, that needs no credentials',
      }),
    ),
  },
  { additionalProperties: false, title: 'SyntheticAttempt' },
)
export type StoredAttempt = Static<typeof StoredAttempt>

export const RunResult = Type.Object(
  {
    id: Uuid,
    region: Type.String(),
    dueAt: Timestamp,
    status: ResultStatusSchema,
    totalMs: Type.Union([Type.Number(), Type.Null()]),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    relayId: Type.Union([Uuid, Type.Null()]),
    startedAt: Type.Union([Timestamp, Type.Null()]),
    finishedAt: Type.Union([Timestamp, Type.Null()]),
    attempts: Type.Array(StoredAttempt, { description: 'Every attempt of the run, retries included; the last decided it' }),
  },
  { title: 'SyntheticRunResult' },
)

export const Relay = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    regions: Type.Array(Type.String()),
    heartbeatSeconds: Type.Integer(),
    healthy: Type.Boolean({ description: 'false once 3 heartbeats are missed' }),
    lastHeartbeatAt: Type.Union([Timestamp, Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()]),
    browser: Type.Boolean({ description: 'It said at its last heartbeat that it has Chromium: browser checks run on it' }),
    key: Type.Optional(Type.String({ description: 'When created: the relay’s key (RELAY_KEY), shown once' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'SyntheticRelay' },
)

export function relayBody(row: RelayRow, key?: string) {
  return {
    id: row.id,
    name: row.name,
    regions: row.regions,
    heartbeatSeconds: row.heartbeatSeconds,
    healthy: row.healthy,
    lastHeartbeatAt: row.lastHeartbeatAt?.toISOString() ?? null,
    version: row.version,
    browser: row.browser,
    ...(key ? { key } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}
