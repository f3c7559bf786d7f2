import { Type } from 'typebox'
import { PaginationQuery, Timestamp } from '@svc/http'
import type { DeployEventRow } from './queries.js'
import { deployKinds, deployStatuses, type DeployKind, type DeployStatus } from './read.js'

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])

export const DeployEvent = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    configId: Nullable(Type.String({ format: 'uuid' })),
    source: Type.Enum(['generic', 'github'] as const),
    kind: Type.Enum(deployKinds, { description: 'A release, a configuration change without one, or a rollback' }),
    service: Type.String(),
    environment: Nullable(Type.String()),
    version: Nullable(Type.String()),
    commitSha: Nullable(Type.String()),
    repository: Nullable(Type.String()),
    url: Nullable(Type.String()),
    status: Type.Enum(deployStatuses),
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    deployedAt: Timestamp,
    createdAt: Timestamp,
  },
  { title: 'DeployEvent' },
)

export const DeployQuery = Type.Object({
  ...PaginationQuery.properties,
  service: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  environment: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  status: Type.Optional(Type.Enum(deployStatuses)),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Deployed at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Deployed before' })),
})

export function deployBody(row: DeployEventRow) {
  return {
    ...row,
    // The table's check constraints hold these to the schema's lists.
    source: row.source as 'generic' | 'github',
    kind: row.kind as DeployKind,
    status: row.status as DeployStatus,
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    deployedAt: row.deployedAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
  }
}
