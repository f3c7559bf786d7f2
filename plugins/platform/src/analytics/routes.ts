import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { MAX_BATCH_BYTES, MAX_BATCH_EVENTS, TrackMessage, ingestEvents, usageSummary, type EventOutcome } from '@svc/analytics'
import { accountOf, membershipOf } from '@svc/auth'
import { invalidField } from '@svc/http'
import { OrgParams } from '../organizations/schemas.js'

export interface AnalyticsRouteOptions {
  /** Days of raw events kept: older timestamps are refused as they arrive. */
  retentionDays: number
}

const tags = ['analytics']
const DAY_MS = 86_400_000
/** The longest range one summary covers. */
const MAX_SUMMARY_DAYS = 400

const Outcome = Type.Object(
  {
    index: Type.Integer({ description: 'Position in the request' }),
    messageId: Type.Union([Type.String(), Type.Null()], { description: 'As sent, or the one generated when none was' }),
    status: Type.Union([Type.Literal('stored'), Type.Literal('duplicate'), Type.Literal('rejected')]),
    error: Type.Optional(Type.String({ description: 'Why a rejected event was refused: `path: problem`' })),
    redacted: Type.Optional(Type.Array(Type.String(), { description: 'Property paths the privacy rule replaced with [redacted]' })),
  },
  { title: 'AnalyticsEventOutcome' },
)

const IngestResult = Type.Object(
  {
    stored: Type.Integer(),
    duplicates: Type.Integer(),
    rejected: Type.Integer(),
    events: Type.Array(Outcome),
  },
  { title: 'AnalyticsIngestResult' },
)

const Batch = Type.Object(
  {
    batch: Type.Array(Type.Unknown({ description: 'A TrackMessage; each is judged on its own' }), {
      minItems: 1,
      maxItems: MAX_BATCH_EVENTS,
    }),
    sentAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the batch left the sender: corrects its clock' })),
    context: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'AnalyticsBatch', additionalProperties: true },
)

const UsageQuery = Type.Object({
  from: Type.String({ format: 'date', description: 'First UTC day, inclusive' }),
  to: Type.String({ format: 'date', description: 'Last UTC day, exclusive' }),
  interval: Type.Union([Type.Literal('day'), Type.Literal('week')], { default: 'day' }),
  event: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only this event' })),
})

const UsageSummary = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        start: Type.String({ format: 'date', description: 'The day, or the Monday of the ISO week' }),
        events: Type.Integer(),
        activeUsers: Type.Integer({ description: 'Distinct users (or anonymous ids) with a counted event' }),
        byEvent: Type.Record(Type.String(), Type.Integer()),
      }),
    ),
    meta: Type.Object({ from: Type.String(), to: Type.String(), interval: Type.String(), event: Type.Union([Type.String(), Type.Null()]) }),
  },
  { title: 'UsageSummary' },
)

function resultOf(outcomes: EventOutcome[]) {
  const count = (status: EventOutcome['status']) => outcomes.filter((outcome) => outcome.status === status).length
  return { stored: count('stored'), duplicates: count('duplicate'), rejected: count('rejected'), events: outcomes }
}

/**
 * Product usage telemetry in Segment's `track` shape (decision 0022): one event or a batch,
 * each event judged on its own (a bad one is refused with its reason, the rest are kept), a
 * message id seen before stored once. Any member sends their own events and reads the
 * organization's counts (as the audit log and AI usage, they hold no one else's data).
 */
export const analyticsRoutes: FastifyPluginAsyncTypebox<AnalyticsRouteOptions> = async (app, { retentionDays }) => {
  const db = app.database.db

  const ingest = (request: Parameters<typeof membershipOf>[0], messages: readonly unknown[], sentAt?: string) => {
    const receivedAt = new Date()
    return ingestEvents(db, messages, {
      organizationId: membershipOf(request).organizationId,
      userId: accountOf(request).id,
      receivedAt,
      sentAt: sentAt ? new Date(sentAt) : undefined,
      oldestAccepted: new Date(receivedAt.getTime() - retentionDays * DAY_MS),
    })
  }

  app.post(
    '/api/v1/organizations/:orgId/analytics/track',
    {
      schema: {
        tags,
        summary: 'Record one product usage event (member)',
        description:
          'Segment’s `track` call. 400 naming the field when the event cannot be stored; `duplicate` when its messageId was stored before.',
        params: OrgParams,
        body: TrackMessage,
        response: { 200: IngestResult },
      },
      bodyLimit: 64 * 1024,
    },
    async (request) => {
      const outcomes = await ingest(request, [request.body])
      const refused = outcomes.find((outcome) => outcome.status === 'rejected')
      if (refused?.error) {
        const [field = 'body', ...problem] = refused.error.split(': ')
        throw invalidField(field, problem.join(': '))
      }
      return resultOf(outcomes)
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/analytics/batch',
    {
      schema: {
        tags,
        summary: 'Record product usage events in a batch (member)',
        description:
          `Up to ${MAX_BATCH_EVENTS} events and ${MAX_BATCH_BYTES} bytes (413 past it). Each event is judged on its own; the answer lists every ` +
          'event’s outcome in order. Retrying a batch is safe: events whose messageId and timestamp were stored before are `duplicate`.',
        params: OrgParams,
        body: Batch,
        response: { 200: IngestResult },
      },
      bodyLimit: MAX_BATCH_BYTES,
    },
    async (request) => resultOf(await ingest(request, request.body.batch, request.body.sentAt)),
  )

  app.get(
    '/api/v1/organizations/:orgId/usage/events',
    {
      schema: {
        tags,
        summary: 'Product usage by day or week (member)',
        description: `Counts from the daily summaries, for at most ${MAX_SUMMARY_DAYS} days; every bucket of the range is present.`,
        params: OrgParams,
        querystring: UsageQuery,
        response: { 200: UsageSummary },
      },
    },
    async (request) => {
      const { from, to, interval, event } = request.query
      const fromDay = new Date(`${from}T00:00:00Z`)
      const toDay = new Date(`${to}T00:00:00Z`)
      if (toDay <= fromDay) throw invalidField('to', 'must be after `from`', 'querystring')
      if (toDay.getTime() - fromDay.getTime() > MAX_SUMMARY_DAYS * DAY_MS)
        throw invalidField('to', `the range covers at most ${MAX_SUMMARY_DAYS} days`, 'querystring')
      const data = await usageSummary(db, membershipOf(request).organizationId, { from: fromDay, to: toDay, interval, event })
      return { data, meta: { from, to, interval, event: event ?? null } }
    },
  )
}
