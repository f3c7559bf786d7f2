import { createHash, randomInt } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { isUuid } from '@svc/auth'
import type { Executor } from '@svc/db'
import { BadRequestError, ConflictError, NotFoundError, TooManyRequestsError, invalidField } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import type { PhoneVerificationConfig } from '@svc/config'
import { checkTarget, type OutboundPolicy } from '@svc/outbound'
import { phoneNumberRefusal } from './phone-numbers.js'
import {
  countWrongCode,
  deleteContactMethod,
  findContactMethod,
  insertContactMethod,
  listContactMethods,
  lockPhoneCodes,
  markVerified,
  phoneCodesSent,
  recordPhoneCodeSend,
  setCode,
  type ContactMethodRow,
} from './queries.js'
import { ContactMethod, ContactParams, CreateContactMethod, E164, VerifyContactMethod, type ContactType } from './schemas.js'

const tags = ['users']
const CODE_MINUTES = 10
const MAX_ATTEMPTS = 5
const RESEND_SECONDS = 30
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/

const codeHash = (id: string, code: string) => createHash('sha256').update(`${id}:${code}`).digest('hex')

const CodeDelivery = Type.Object(
  {
    status: Type.Enum(['pending', 'held'] as const, {
      description: 'held: no provider for the channel is configured; the code cannot reach you',
    }),
    reason: Type.Optional(Type.String()),
  },
  { description: 'What became of the verification code just sent' },
)
const ContactMethodWithDelivery = Type.Object({ ...ContactMethod.properties, codeDelivery: Type.Optional(CodeDelivery) })

function body(row: ContactMethodRow) {
  return {
    id: row.id,
    type: row.type as ContactType,
    address: row.address,
    label: row.label,
    verified: row.verifiedAt !== null,
    verifiedAt: row.verifiedAt?.toISOString() ?? null,
    codeSentAt: row.codeSentAt?.toISOString() ?? null,
    codeExpiresAt: row.codeExpiresAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  }
}

function codeMessage(type: Exclude<ContactType, 'push'>, code: string) {
  if (type === 'email') {
    return { subject: 'Your verification code', text: `Your verification code is ${code}. It expires in ${CODE_MINUTES} minutes.` }
  }
  if (type === 'sms') return { text: `Incident Platform verification code: ${code}. It expires in ${CODE_MINUTES} minutes.` }
  // Spoken digit by digit, twice.
  const spoken = code.split('').join(', ')
  return { text: `Your verification code is ${spoken}. Again: ${spoken}.` }
}

/**
 * The signed-in user's contact methods (issue 14): e-mail addresses and phone numbers for SMS and
 * voice, each proven by a six-digit code sent to it before it is paged, and web-push
 * subscriptions, which the browser proves. Codes expire after ten minutes and five wrong tries;
 * only their SHA-256 is stored. Codes to phone numbers cost money, so they are capped per person
 * and per number, and never sent to premium-rate or shared-cost numbers (decision 0012).
 */
export const contactMethodRoutes: FastifyPluginAsyncTypebox<{
  notifier: Notifier
  outbound: OutboundPolicy
  phoneVerification: PhoneVerificationConfig
}> = async (app, { notifier, outbound, phoneVerification }) => {
  const db = app.database.db
  const methodOf = async (executor: Executor, userId: string, id: string, forUpdate = false) => {
    const row = isUuid(id) ? await findContactMethod(executor, userId, id, forUpdate) : undefined
    if (!row) throw new NotFoundError('contact method')
    return row
  }

  /**
   * Refuses a code to a phone number past the caps (429, nothing sent): the number's wrong codes,
   * then the person's codes ever, then in the last hour (with when to come back). Counts the send.
   */
  async function spendPhoneCode(executor: Executor, reply: FastifyReply, userId: string, row: ContactMethodRow): Promise<void> {
    if (row.wrongCodes >= phoneVerification.attemptsPerMethod)
      throw new TooManyRequestsError(
        `${phoneVerification.attemptsPerMethod} wrong codes were tried on this number: no more codes are sent to it`,
      )
    await lockPhoneCodes(executor, userId)
    const sent = await phoneCodesSent(executor, userId)
    if (sent.total >= phoneVerification.codesTotal)
      throw new TooManyRequestsError(`you have been sent ${sent.total} codes to phone numbers, the most this installation sends one person`)
    if (sent.lastHour >= phoneVerification.codesPerHour) {
      const wait = Math.max(1, Math.ceil(((sent.firstInHour?.getTime() ?? Date.now()) + 3_600_000 - Date.now()) / 1000))
      reply.header('retry-after', String(wait))
      throw new TooManyRequestsError(
        `at most ${phoneVerification.codesPerHour} codes to phone numbers an hour: try again in ${wait} seconds`,
      )
    }
    await recordPhoneCodeSend(executor, userId, row.type)
  }

  /** A fresh code for the method, sent in the caller's transaction through the outbox. */
  async function sendCode(executor: Executor, reply: FastifyReply, userId: string, row: ContactMethodRow) {
    if (row.type === 'sms' || row.type === 'voice') await spendPhoneCode(executor, reply, userId, row)
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
    await setCode(executor, row.id, codeHash(row.id, code), new Date(Date.now() + CODE_MINUTES * 60_000))
    const type = row.type as Exclude<ContactType, 'push'>
    const queued = await notifier.queueMessage(executor, {
      organizationId: null,
      channel: type,
      kind: 'contact.verification',
      to: row.address,
      ...codeMessage(type, code),
    })
    return { status: queued.status, ...(queued.reason ? { reason: queued.reason } : {}) }
  }

  app.get(
    '/api/v1/users/me/contact-methods',
    { schema: { tags, summary: 'Your contact methods', response: { 200: Type.Object({ data: Type.Array(ContactMethod) }) } } },
    async (request) => ({ data: (await listContactMethods(db, request.user.userId)).map(body) }),
  )

  app.get(
    '/api/v1/users/me/contact-methods/push-key',
    {
      schema: {
        tags,
        summary: 'The key browsers subscribe to web push with (its `applicationServerKey`)',
        description: 'Null when this installation has no VAPID keys (push pages are then held, with the reason on each attempt).',
        response: {
          200: Type.Object({
            publicKey: Type.Union([Type.String(), Type.Null()], { description: 'URL-safe base64, for PushManager.subscribe()' }),
          }),
        },
      },
    },
    async () => ({ publicKey: notifier.config.webPush?.publicKey ?? null }),
  )

  app.post(
    '/api/v1/users/me/contact-methods',
    {
      schema: {
        tags,
        summary: 'Add a contact method; e-mail, SMS and voice get a six-digit code to verify it',
        description:
          '`address` for email (an address) and sms/voice (E.164, e.g. +4915112345678); `subscription` for push. Only verified methods are paged. 409 when you have it already.',
        body: CreateContactMethod,
        response: { 201: ContactMethodWithDelivery },
      },
    },
    async (request, reply) => {
      const { type, address, subscription, label } = request.body
      if (type === 'push' ? !subscription : !address)
        throw invalidField(type === 'push' ? 'subscription' : 'address', `is required for ${type}`)
      if (type === 'push' ? address : subscription)
        throw invalidField(type === 'push' ? 'address' : 'subscription', `is not used for ${type}`)
      if (type === 'email' && !EMAIL.test(address ?? '')) throw invalidField('address', 'must be an e-mail address')
      if ((type === 'sms' || type === 'voice') && !new RegExp(E164).test(address ?? '')) {
        throw invalidField('address', 'must be an E.164 number such as +4915112345678')
      }
      const refusal = type === 'sms' || type === 'voice' ? phoneNumberRefusal(address!, phoneVerification.countries) : undefined
      if (refusal) throw invalidField('address', refusal)
      // The endpoint is where the service will send requests: a push service on the public internet.
      if (subscription) {
        await checkTarget(subscription.endpoint, outbound).catch((error: Error) => {
          throw invalidField('subscription/endpoint', error.message)
        })
      }
      const result = await db.transaction().execute(async (trx) => {
        const row = await insertContactMethod(trx, {
          userId: request.user.userId,
          type,
          address: type === 'push' ? subscription!.endpoint : type === 'email' ? address!.toLowerCase() : address!,
          label: label ?? null,
          pushKeys: type === 'push' ? subscription!.keys : null,
          verifiedAt: type === 'push' ? new Date() : null,
        })
        if (!row) throw new ConflictError(`you have this ${type} contact method already`)
        const codeDelivery = type === 'push' ? undefined : await sendCode(trx, reply, request.user.userId, row)
        const fresh = await methodOf(trx, request.user.userId, row.id)
        return { row: fresh, codeDelivery }
      })
      notifier.wake()
      return reply.code(201).send({ ...body(result.row), ...(result.codeDelivery ? { codeDelivery: result.codeDelivery } : {}) })
    },
  )

  app.post(
    '/api/v1/users/me/contact-methods/:contactId/verify',
    {
      schema: {
        tags,
        summary: 'Verify a contact method with the code sent to it',
        description: `400 for a wrong or expired code; after ${MAX_ATTEMPTS} wrong tries the code is void and a new one must be sent.`,
        params: ContactParams,
        body: VerifyContactMethod,
        response: { 200: ContactMethod },
      },
    },
    async (request) => {
      // The wrong-code count must survive the refusal, so the refusal is thrown after the commit.
      const outcome = await db.transaction().execute(async (trx) => {
        const row = await methodOf(trx, request.user.userId, request.params.contactId, true)
        if (row.verifiedAt) return { row }
        if (!row.codeHash || !row.codeExpiresAt) return { refusal: 'no code is pending: send a new one' }
        if (row.codeExpiresAt <= new Date()) return { refusal: 'the code has expired: send a new one' }
        if (codeHash(row.id, request.body.code) !== row.codeHash) {
          const spent = row.codeAttempts + 1 >= MAX_ATTEMPTS
          await countWrongCode(trx, row.id, spent)
          return { refusal: spent ? 'wrong code, and that was the last try: send a new one' : 'wrong code' }
        }
        return { row: await markVerified(trx, row.id) }
      })
      if ('refusal' in outcome) throw invalidField('code', outcome.refusal ?? 'wrong code')
      return body(outcome.row)
    },
  )

  app.post(
    '/api/v1/users/me/contact-methods/:contactId/resend-code',
    {
      schema: {
        tags,
        summary: `Send a new verification code (at most one every ${RESEND_SECONDS} seconds)`,
        params: ContactParams,
        response: { 200: ContactMethodWithDelivery },
      },
    },
    async (request, reply) => {
      const result = await db.transaction().execute(async (trx) => {
        const row = await methodOf(trx, request.user.userId, request.params.contactId, true)
        if (row.type === 'push') throw new BadRequestError('push subscriptions are not verified by code')
        if (row.verifiedAt) throw new ConflictError('the contact method is verified already')
        const wait = row.codeSentAt ? RESEND_SECONDS - Math.floor((Date.now() - row.codeSentAt.getTime()) / 1000) : 0
        if (wait > 0) {
          reply.header('retry-after', String(wait))
          throw new TooManyRequestsError(`a code was sent moments ago: try again in ${wait} seconds`)
        }
        const codeDelivery = await sendCode(trx, reply, request.user.userId, row)
        return { row: await methodOf(trx, request.user.userId, row.id), codeDelivery }
      })
      notifier.wake()
      return { ...body(result.row), codeDelivery: result.codeDelivery }
    },
  )

  app.delete(
    '/api/v1/users/me/contact-methods/:contactId',
    { schema: { tags, summary: 'Remove a contact method', params: ContactParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const removed = isUuid(request.params.contactId)
        ? await deleteContactMethod(db, request.user.userId, request.params.contactId)
        : undefined
      if (!removed) throw new NotFoundError('contact method')
      return reply.code(204).send(null)
    },
  )
}
