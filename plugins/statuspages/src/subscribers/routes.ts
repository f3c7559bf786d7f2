import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { OutboundConfig } from '@svc/config'
import { pageOf, type Executor } from '@svc/db'
import { ListResponse, NotFoundError, PaginationQuery, Timestamp } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import {
  deleteSubscriber,
  findSubscriber,
  listSubscriberNotifications,
  listSubscribers,
  type SubscriberRow,
} from '../queries/subscribers.js'
import { auditEntry, pageOfRequest } from '../pages/access.js'
import { publicUrlOf } from '../pages/public-url.js'
import { MANAGED_BASE, PageParams, tags } from '../schemas.js'
import { SUBSCRIBER_KINDS, SubscribeBody, confirmLinks, subscribe, type SubscriberKind } from './subscribe.js'

const Subscriber = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Type.Enum(SUBSCRIBER_KINDS),
    email: Type.Union([Type.String(), Type.Null()]),
    phone: Type.Union([Type.String(), Type.Null()], { description: 'An SMS subscriber’s number, in E.164' }),
    url: Type.Union([Type.String(), Type.Null()]),
    componentIds: Type.Array(Type.String({ format: 'uuid' }), { description: 'Empty: every component' }),
    locale: Type.Union([Type.String(), Type.Null()], { description: 'The language of its e-mails; null: the page’s default' }),
    confirmed: Type.Boolean(),
    confirmedAt: Type.Union([Timestamp, Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'StatusSubscriber' },
)
const SubscriberParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), subscriberId: Type.String() })

const OutboxStatus = Type.Enum(['pending', 'sent', 'delivered', 'held', 'failed', 'captured'] as const, {
  description:
    'pending: waiting or being retried; sent: the mail server or receiver took it; delivered: reported delivered; held: no provider configured; failed: given up, see lastError; captured: taken by the development catcher of `pnpm start`, not sent',
})
const SubscriberNotification = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The message id; a webhook delivery carries it as `webhook-id: msg_<id>`' }),
    event: Type.Union([Type.String(), Type.Null()], { description: 'incident.created, incident.updated, maintenance.started, …' }),
    incidentId: Type.String({ format: 'uuid' }),
    incidentName: Type.String(),
    kind: Type.Enum(['incident', 'maintenance'] as const),
    updateId: Type.String({ format: 'uuid' }),
    updateStatus: Type.String(),
    status: Type.Union([OutboxStatus, Type.Null()]),
    attempts: Type.Integer(),
    lastError: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
    sentAt: Type.Union([Timestamp, Type.Null()]),
    updatedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'StatusSubscriberNotification' },
)
type Notification = Awaited<ReturnType<typeof listSubscriberNotifications>>['rows'][number]

const notificationBody = (row: Notification) => ({
  id: row.messageId,
  event: row.messageKind?.replace(/^statuspage\./, '') ?? null,
  incidentId: row.incidentId,
  incidentName: row.name,
  kind: row.kind as 'incident' | 'maintenance',
  updateId: row.updateId,
  updateStatus: row.updateStatus,
  status: row.status as Static<typeof OutboxStatus> | null,
  attempts: row.attempts ?? 0,
  lastError: row.lastError,
  createdAt: row.createdAt.toISOString(),
  sentAt: row.sentAt?.toISOString() ?? null,
  updatedAt: row.updatedAt?.toISOString() ?? null,
})

const body = (row: SubscriberRow) => ({
  id: row.id,
  kind: row.kind as SubscriberKind,
  email: row.email,
  phone: row.phone,
  url: row.url,
  componentIds: row.componentIds,
  locale: row.locale,
  confirmed: row.confirmedAt !== null,
  confirmedAt: row.confirmedAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
})

/** The page's subscriber named in a path, or 404. */
async function subscriberOf(db: Executor, page: { id: string; organizationId: string }, subscriberId: string) {
  const row = isUuid(subscriberId) ? await findSubscriber(db, page.organizationId, page.id, subscriberId) : undefined
  if (!row) throw new NotFoundError('subscriber')
  return row
}

/**
 * A page's subscribers as its managers see them (issue 15): listed with what each was sent and how
 * its delivery went (statuspages viewer), added on someone's behalf (statuspages manager; e-mail
 * still needs the person's confirmation) and removed (statuspages manager). Secrets and tokens are
 * never answered here.
 */
export const subscriberRoutes: FastifyPluginAsyncTypebox<{ notifier: Notifier; outbound: OutboundConfig; productUrl: string }> = async (
  app,
  options,
) => {
  const db = app.database.db
  const viewer = app.requireProductRole('statuspages', 'viewer')
  const manager = app.requireProductRole('statuspages', 'manager')

  app.get(
    `${MANAGED_BASE}/pages/:pageId/subscribers`,
    {
      schema: {
        tags,
        summary: 'A page’s subscribers (statuspages viewer)',
        params: PageParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(Subscriber) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      const { page: number, limit } = request.query
      const { rows, total } = await listSubscribers(db, page.organizationId, page.id, pageOf({ page: number, limit }))
      return { data: rows.map(body), meta: { page: number, limit, total } }
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/subscribers/:subscriberId/notifications`,
    {
      schema: {
        tags,
        summary: 'What a subscriber was sent and how each delivery went, newest first (statuspages viewer)',
        params: SubscriberParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(SubscriberNotification) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      const subscriber = await subscriberOf(db, page, request.params.subscriberId)
      const { page: number, limit } = request.query
      const { rows, total } = await listSubscriberNotifications(
        db,
        page.organizationId,
        page.id,
        subscriber.id,
        pageOf({ page: number, limit }),
      )
      return { data: rows.map(notificationBody), meta: { page: number, limit, total } }
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/subscribers`,
    {
      schema: {
        tags,
        summary:
          'Add a subscriber (statuspages manager): an e-mail one confirms by the link sent to it, an SMS one by the code texted to it',
        params: PageParams,
        body: SubscribeBody,
        response: {
          201: Type.Object({
            ...Subscriber.properties,
            secret: Type.Optional(Type.String({ description: 'Webhook subscribers: shown once' })),
          }),
        },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const created = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const root = publicUrlOf(options.productUrl, { slug: page.slug, customDomain: null })
        const result = await subscribe(trx, { ...options, confirmUrl: confirmLinks(root, page.locales) }, page, request.body)
        const row = await findSubscriber(trx, organizationId, page.id, result.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_subscriber', result.id),
          action: 'status_subscriber.created',
          after: { kind: result.kind },
        })
        return { ...body(row!), ...('secret' in result ? { secret: result.secret } : {}) }
      })
      options.notifier.wake()
      return reply.code(201).send(created)
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId/subscribers/:subscriberId`,
    {
      schema: { tags, summary: 'Remove a subscriber (statuspages manager)', params: SubscriberParams, response: { 204: Type.Null() } },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await subscriberOf(trx, page, request.params.subscriberId)
        await deleteSubscriber(trx, row.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_subscriber', row.id),
          action: 'status_subscriber.deleted',
          before: { kind: row.kind },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
