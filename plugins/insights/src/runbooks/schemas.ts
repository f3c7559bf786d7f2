import { Type } from 'typebox'
import { PaginationQuery, Timestamp } from '@svc/http'
import type { RunbookRow, runbookVersions } from '../queries/runbooks.js'

const Service = Type.String({ minLength: 1, maxLength: 200 })
const Labels = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ maxLength: 200 }), {
  maxProperties: 20,
  description: 'Label matchers: the runbook fits an alert whose labels have every one of these values',
})

export const RunbookParams = Type.Object({ orgId: Type.String(), runbookId: Type.String() })

const Title = Type.String({ minLength: 1, maxLength: 300 })
const Body = Type.String({
  minLength: 1,
  maxLength: 100_000,
  description: 'Markdown; its list items are the steps the runbook agent proposes',
})
const Services = Type.Array(Service, { maxItems: 20, uniqueItems: true })

export const RunbookInput = Type.Object(
  { title: Title, body: Body, services: Type.Optional(Services), labels: Type.Optional(Labels) },
  { additionalProperties: false },
)

// No defaults here: a property left out of a change keeps its value.
export const RunbookPatch = Type.Object(
  { title: Type.Optional(Title), body: Type.Optional(Body), services: Type.Optional(Services), labels: Type.Optional(Labels) },
  { additionalProperties: false, minProperties: 1 },
)

export const Runbook = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    title: Type.String(),
    body: Type.String(),
    services: Type.Array(Type.String()),
    labels: Type.Record(Type.String(), Type.String()),
    version: Type.Integer({ minimum: 1, description: 'Each change is a new version; …/versions keeps them all' }),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    updatedBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Runbook' },
)

export const RunbookVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    title: Type.String(),
    body: Type.String(),
    services: Type.Array(Type.String()),
    labels: Type.Record(Type.String(), Type.String()),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'RunbookVersion' },
)

export const RunbookQuery = Type.Object({ ...PaginationQuery.properties, service: Type.Optional(Service) })

export function runbookBody(row: RunbookRow) {
  return {
    ...row,
    labels: row.labels as Record<string, string>,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export function versionBody(row: Awaited<ReturnType<typeof runbookVersions>>[number]) {
  return { ...row, labels: row.labels as Record<string, string>, createdAt: row.createdAt.toISOString() }
}
