import formBody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import twilio from 'twilio'
import { Type } from 'typebox'
import type { TwilioConfig } from '@svc/config'
import type { Executor } from '@svc/db'
import { ForbiddenError, NotFoundError } from '@svc/http'
import { TWILIO_STATUS_PATH, TWILIO_VOICE_PATH, outboxMessage, recordDeliveryReport } from '@svc/notifier'
import { moveAlertByPerson } from '../alerts/index.js'
import { ackLinksWithSmsCode, attemptOfMessage, useAckLink } from './queries.js'
import { ackTimeoutFromNow, type ContactReader } from '../oncall/index.js'

/** Where Twilio sends the replies to our SMS (configure it as the number's messaging webhook). */
export const TWILIO_SMS_PATH = '/api/v1/twilio/sms'

const Form = Type.Record(Type.String(), Type.String())
const MessageParams = Type.Object({ messageId: Type.String({ format: 'uuid' }) })
const TwiML = Type.String({ description: 'TwiML (text/xml)' })
const ACK_REPLY = /^\s*ack\s+(\d{6})\s*$/i
// The opt-out keywords US carriers and Twilio honour (https://help.twilio.com/articles/223134027).
const OPT_OUT = /^\s*(stop|stopall|unsubscribe|cancel|end|quit|revoke|optout)\s*$/i

/** What a number that texted STOP ends elsewhere (status page subscriptions); it is told nothing more. */
export type SmsOptOut = (db: Executor, phone: string) => Promise<unknown>

// Twilio's final states, and what they mean for the message (https://www.twilio.com/docs/messaging/api/message-resource#message-status-values).
const DELIVERED = new Set(['delivered', 'completed'])
const FAILED = new Set(['failed', 'undelivered', 'busy', 'no-answer', 'canceled'])

export interface TwilioRouteOptions {
  twilio: TwilioConfig
  contacts: ContactReader
  smsOptOut?: SmsOptOut
}

/** Acknowledges as the paged person, once (compare-and-set); answers whether it did. */
async function acknowledge(db: Executor, page: { organizationId: string; alertId: string; userId: string }, via: 'sms' | 'voice') {
  return moveAlertByPerson(db, page, { to: 'acknowledged', ackTimeout: ackTimeoutFromNow }, page.userId, { via })
}

/**
 * Twilio's callbacks: delivery reports for messages and calls, the words a call says
 * (with "press 1 to acknowledge"), the keypress, and SMS replies `ack <code>`. Public routes, each
 * refused with 403 unless `X-Twilio-Signature` is Twilio's HMAC over the URL it called and the
 * form it posted, with our auth token (twilio.validateRequest).
 */
export const twilioRoutes: FastifyPluginAsyncTypebox<TwilioRouteOptions> = async (app, { twilio: config, contacts, smsOptOut }) => {
  const db = app.database.db
  await app.register(formBody)

  // The URL Twilio signed is the public one it called, not the one this process sees behind a proxy.
  const verified = async (request: FastifyRequest) => {
    const signature = request.headers['x-twilio-signature']
    const params = (request.body ?? {}) as Record<string, string>
    if (
      typeof signature !== 'string' ||
      !twilio.validateRequest(config.authToken, signature, `${config.callbackBase}${request.url}`, params)
    ) {
      throw new ForbiddenError('the request is not signed by Twilio')
    }
  }
  const route = { config: { public: true }, preHandler: verified }

  const statusReport = {
    ...route,
    schema: {
      tags: ['twilio'],
      summary: 'Twilio status callback: a message or call was delivered or failed (signed by Twilio)',
      body: Form,
      response: { 204: Type.Null() },
    },
  }
  /** Records a final state Twilio reports; earlier states (queued, sent, ringing) change nothing. */
  const recordReport = async (form: Record<string, string>, messageId?: string) => {
    const { MessageSid, MessageStatus, CallSid, CallStatus, ErrorCode, ErrorMessage } = form
    const sid = MessageSid ?? CallSid
    const status = MessageStatus ?? CallStatus ?? ''
    if (!sid || !(DELIVERED.has(status) || FAILED.has(status))) return
    const reason = FAILED.has(status)
      ? `twilio: ${status}${ErrorCode ? ` (Twilio error ${ErrorCode}${ErrorMessage ? `: ${ErrorMessage}` : ''})` : ''}`
      : null
    await recordDeliveryReport(db, 'twilio', sid, { status: DELIVERED.has(status) ? 'delivered' : 'failed', reason }, messageId)
  }

  // The callback of every message and call names its outbox message.
  app.post(
    `${TWILIO_STATUS_PATH}/:messageId`,
    { ...statusReport, schema: { ...statusReport.schema, params: MessageParams } },
    async (request, reply) => {
      await recordReport(request.body, request.params.messageId)
      return reply.code(204).send(null)
    },
  )
  // Messages and calls placed before callbacks named the message are found by Twilio's id.
  app.post(TWILIO_STATUS_PATH, statusReport, async (request, reply) => {
    await recordReport(request.body)
    return reply.code(204).send(null)
  })

  app.post(
    `${TWILIO_VOICE_PATH}/:messageId`,
    {
      ...route,
      schema: {
        tags: ['twilio'],
        summary: 'What a call says (TwiML); a page asks for 1 to acknowledge (signed by Twilio)',
        params: MessageParams,
        body: Form,
        response: { 200: TwiML },
      },
    },
    async (request, reply) => {
      const message = await outboxMessage(db, request.params.messageId)
      if (!message || message.channel !== 'voice') throw new NotFoundError('call')
      const response = new twilio.twiml.VoiceResponse()
      if (message.kind === 'alert.page') {
        const gather = response.gather({
          numDigits: 1,
          action: `${config.callbackBase}${TWILIO_VOICE_PATH}/${message.id}/keypress`,
          method: 'POST',
          timeout: 10,
        })
        gather.say(`${message.bodyText} Press 1 to acknowledge.`)
        response.say('No key was pressed. The alert is not acknowledged. Goodbye.')
      } else {
        response.say(message.bodyText)
      }
      return reply.type('text/xml').send(response.toString())
    },
  )

  app.post(
    `${TWILIO_VOICE_PATH}/:messageId/keypress`,
    {
      ...route,
      schema: {
        tags: ['twilio'],
        summary: 'The key pressed on a paging call: 1 acknowledges (signed by Twilio)',
        params: MessageParams,
        body: Form,
        response: { 200: TwiML },
      },
    },
    async (request, reply) => {
      const page = await attemptOfMessage(db, request.params.messageId)
      if (!page?.userId) throw new NotFoundError('call')
      const response = new twilio.twiml.VoiceResponse()
      if (request.body.Digits !== '1') response.say('That key does nothing. The alert is not acknowledged. Goodbye.')
      else {
        const userId = page.userId
        const done = await db.transaction().execute((trx) => acknowledge(trx, { ...page, userId }, 'voice'))
        response.say(done ? 'The alert is acknowledged. Goodbye.' : 'The alert was already acknowledged or resolved. Goodbye.')
      }
      return reply.type('text/xml').send(response.toString())
    },
  )

  app.post(
    TWILIO_SMS_PATH,
    {
      ...route,
      schema: {
        tags: ['twilio'],
        summary:
          'An SMS to our number: "ack <code>" from a paged person’s verified number acknowledges; STOP ends the number’s status page subscriptions (signed by Twilio)',
        body: Form,
        response: { 200: TwiML },
      },
    },
    async (request, reply) => {
      const code = ACK_REPLY.exec(request.body.Body ?? '')?.[1]
      const from = request.body.From ?? ''
      const response = new twilio.twiml.MessagingResponse()
      // STOP (Twilio's Advanced Opt-Out names it in OptOutType too): nothing more is sent to the
      // number, this answer included; Twilio itself confirms the opt-out to it.
      if (OPT_OUT.test(request.body.Body ?? '') || request.body.OptOutType === 'STOP') {
        if (from && smsOptOut) await db.transaction().execute((trx) => smsOptOut(trx, from))
        return reply.type('text/xml').send(response.toString())
      }
      if (!code) response.message('To acknowledge, reply "ack" and the code of the page, e.g. "ack 123456".')
      else {
        const answer = await db.transaction().execute(async (trx) => {
          for (const link of await ackLinksWithSmsCode(trx, code)) {
            // Only the person paged, from a number they verified, answers for their page.
            if (!(await contacts.hasVerifiedPhone(trx, link.userId, from))) continue
            if (!(await useAckLink(trx, link.tokenHash))) continue
            const done = await acknowledge(trx, link, 'sms')
            return done ? `Acknowledged: ${link.title}` : `Already acknowledged or resolved: ${link.title}`
          }
          return 'No page of yours has that code, or it has expired.'
        })
        response.message(answer)
      }
      return reply.type('text/xml').send(response.toString())
    },
  )
}
