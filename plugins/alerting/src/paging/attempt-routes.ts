import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { isUuid, membershipOf } from '@svc/auth'
import { NotFoundError, Timestamp } from '@svc/http'
import { AlertParams, ESCALATION_STATES, findAlert, findEscalation } from '../alerts/index.js'
import { type AttemptRow, listAttempts } from './queries.js'

const NullableString = Type.Union([Type.String(), Type.Null()])
/** `captured`: the development catcher of `pnpm start` took the message; nothing left the machine. */
const attemptStatuses = ['queued', 'sent', 'delivered', 'failed', 'captured'] as const
type AttemptStatus = (typeof attemptStatuses)[number]

const Attempt = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    round: Type.Integer({ description: '0 for the first run of the steps, 1 for the first repeat…' }),
    step: Type.Integer({ description: 'The step’s index in the policy, from 0' }),
    userId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Null: the target reached nobody' }),
    email: NullableString,
    target: Type.Object(
      { type: Type.String(), id: Type.String({ format: 'uuid' }) },
      { description: 'The step target that named this person' },
    ),
    channel: Type.Enum(['email', 'sms', 'voice', 'push', 'chat', 'webhook', 'none'] as const),
    recipient: Type.Union([Type.String(), Type.Null()], { description: 'The address or number used' }),
    status: Type.Enum(attemptStatuses),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why a failed attempt failed' }),
    provider: NullableString,
    providerMessageId: NullableString,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'NotificationAttempt' },
)

const Notifications = Type.Object(
  {
    escalation: Type.Union(
      [
        Type.Object({
          policyId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
          state: Type.Enum(ESCALATION_STATES),
          round: Type.Integer(),
          step: Type.Integer({ description: 'The step that runs next (active) or ran last' }),
          nextAt: Type.Union([Timestamp, Type.Null()], { description: 'When the next step runs unless acknowledged' }),
          note: NullableString,
        }),
        Type.Null(),
      ],
      { description: 'Null: the alert’s config does not escalate' },
    ),
    data: Type.Array(Attempt),
  },
  { title: 'AlertNotifications' },
)

/** The attempt's status, with the outbox's word on delivery for messages it carries. */
function statusOf(row: AttemptRow): { status: AttemptStatus; error: string | null } {
  if (row.status !== 'queued' || !row.outboxStatus) return { status: row.status as AttemptStatus, error: row.error }
  if (row.outboxStatus === 'sent' || row.outboxStatus === 'delivered' || row.outboxStatus === 'captured')
    return { status: row.outboxStatus, error: null }
  if (row.outboxStatus === 'pending') return { status: 'queued', error: row.outboxError }
  return { status: 'failed', error: row.outboxError }
}

function attemptBody(row: AttemptRow) {
  return {
    id: row.id,
    round: row.round,
    step: row.step,
    userId: row.userId,
    email: row.email,
    target: { type: row.targetType, id: row.targetId },
    channel: row.channel as Static<typeof Attempt>['channel'],
    recipient: row.recipient,
    ...statusOf(row),
    provider: row.provider,
    providerMessageId: row.providerMessageId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** `GET /alerts/:alertId/notifications`: the escalation's state and every attempt to reach someone (alerting viewer). */
export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  app.get(
    '/api/v1/organizations/:orgId/alerts/:alertId/notifications',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Who was paged for an alert, on which channel, at which step, and what came of it (alerting viewer)',
        params: AlertParams,
        response: { 200: Notifications },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const alert = isUuid(request.params.alertId) ? await findAlert(db, organizationId, request.params.alertId) : undefined
      if (!alert) throw new NotFoundError('alert')
      // One snapshot for both reads: a step committing between them would show its attempts
      // beside the state before it (a released silence's alert, attempts made and still `silenced`).
      const { escalation, attempts } = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => ({
          escalation: await findEscalation(trx, organizationId, alert.id),
          attempts: await listAttempts(trx, organizationId, alert.id),
        }))
      return {
        escalation: escalation
          ? {
              policyId: escalation.policyId,
              state: escalation.state as (typeof ESCALATION_STATES)[number],
              round: escalation.round,
              step: escalation.step,
              nextAt: escalation.nextAt?.toISOString() ?? null,
              note: escalation.note,
            }
          : null,
        data: attempts.map(attemptBody),
      }
    },
  )
}
