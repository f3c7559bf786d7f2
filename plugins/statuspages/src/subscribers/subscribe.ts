import { createHash, randomBytes, randomInt } from 'node:crypto'
import { Type, type Static } from 'typebox'
import type { OutboundConfig } from '@svc/config'
import type { Executor } from '@svc/db'
import { ConflictError, TooManyRequestsError, invalidField } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import { TargetRefused, checkTarget } from '@svc/outbound'
import { isUuid } from '@svc/auth'
import { LocaleTag, chooseLocale, matchLocale, messagesOf } from '../i18n/locales.js'
import type { Messages } from '../i18n/messages.js'
import { isSeenBy } from '../queries/audiences.js'
import { componentsOfPage } from '../queries/components.js'
import {
  existingSubscriber,
  insertSubscriber,
  lockPageSubscriptions,
  publicSubscriptionCounts,
  renewConfirmation,
} from '../queries/subscribers.js'

/** A confirmation link is sent again to the same unconfirmed address at most this often. */
export const CONFIRMATION_RESEND_MS = 10 * 60_000

/**
 * The caps on what anyone may do through a page's public form (decision 0015, "Subscribers"): e-mail
 * confirmations waiting on one page (each is an e-mail we send to an address someone typed), and
 * webhook subscribers, which are confirmed at once: per page, and per client address a day.
 */
export const PUBLIC_LIMITS = { pendingConfirmationsPerPage: 200, webhooksPerPage: 100, webhooksPerAddressPerDay: 5 }

/** How a subscriber hears of updates: e-mail, a signed webhook, a Slack or Microsoft Teams channel's incoming webhook, or SMS. */
export const SUBSCRIBER_KINDS = ['email', 'webhook', 'slack', 'teams', 'sms'] as const
export type SubscriberKind = (typeof SUBSCRIBER_KINDS)[number]
/** The kinds a URL names, and what is posted to it. */
const URL_KINDS = ['webhook', 'slack', 'teams'] as const

export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex')
/**
 * An SMS code's hash names its page and number too: six digits repeat across subscribers, and
 * the stored hashes are unique.
 */
export const smsCodeHash = (pageId: string, phone: string, code: string) => tokenHash(`sms:${pageId}:${phone}:${code}`)
/** How long a texted code confirms, and how many wrong ones void it (a code cannot be guessed). */
export const SMS_CODE = { validMs: 60 * 60_000, attempts: 5 }
const newToken = () => randomBytes(24).toString('base64url')

export interface SubscribingPage {
  id: string
  organizationId: string
  name: string
  allowSubscribers: boolean
  /** Its languages, the default first. */
  locales: readonly string[]
}

const ComponentIds = Type.Optional(
  Type.Array(Type.String(), { maxItems: 100, uniqueItems: true, description: 'Only these components; unset: every one' }),
)

const SubscriberLocale = Type.Optional({
  ...LocaleTag,
  description:
    'The language of the e-mails, one of the page’s (a region reads as its language). Unset: the reader’s Accept-Language through the public form, else the page’s default',
})

/** A phone number in E.164 (+ and the country code), as Twilio takes it. */
export const PhoneNumber = Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'In E.164, e.g. +14155550100' })

/** A subscription as asked for, publicly or by a manager: an e-mail address, a phone number, or a URL. */
export const SubscribeBody = Type.Union([
  Type.Object(
    { email: Type.String({ format: 'email', maxLength: 320 }), componentIds: ComponentIds, locale: SubscriberLocale },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      url: Type.String({ minLength: 10, maxLength: 2000 }),
      kind: Type.Optional(
        Type.Enum(URL_KINDS, {
          description:
            'What the URL is: `webhook` (the default) gets signed Standard Webhooks events; `slack` a Slack incoming webhook (Block Kit; Mattermost’s take the same), `teams` a Microsoft Teams Workflows webhook (an Adaptive Card)',
        }),
      ),
      componentIds: ComponentIds,
      locale: SubscriberLocale,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      phone: { ...PhoneNumber, description: 'Texted a code that confirms the subscription; STOP ends it' },
      componentIds: ComponentIds,
      locale: SubscriberLocale,
    },
    { additionalProperties: false },
  ),
])
export type Subscription = Static<typeof SubscribeBody>

export interface SubscribeContext {
  notifier: Notifier
  outbound: OutboundConfig
  /** The confirmation link of a token, for a subscriber reading in `locale`. */
  confirmUrl: (token: string, locale: string) => string
  /** The client address of an anonymous subscription (the public form); unset for a manager. */
  publicFrom?: string
  /** The public reader's Accept-Language: their e-mails' language when they name none. */
  readerLanguages?: string
  /**
   * The audiences the subscriber subscribes as (decision 0015, "Audiences"): the public reader's,
   * or those a manager chose. It may follow only components they see, and is told only of what they see.
   */
  audienceIds?: readonly string[]
}

/**
 * The language a subscriber's e-mails are written in: the one asked for (400 when the page is not
 * in it), else the public reader's, else none stored (the page's default when each is sent).
 */
function subscriberLocale(page: SubscribingPage, asked: string | undefined, readerLanguages: string | undefined): string | null {
  if (asked !== undefined) {
    const locale = matchLocale(page.locales, asked)
    if (!locale) throw invalidField('locale', `this status page is in ${page.locales.join(', ')}`)
    return locale
  }
  return readerLanguages === undefined ? null : chooseLocale(page.locales, undefined, readerLanguages)
}

/** The confirmation links of a page reached at `root`: they name the subscriber's language when the page has several. */
export function confirmLinks(root: string, locales: readonly string[]) {
  return (token: string, locale: string) => `${root}subscribers/confirm?token=${token}${locales.length > 1 ? `&locale=${locale}` : ''}`
}

const refuse = (message: string) => new TooManyRequestsError(message)

/**
 * Double opt-in, for an e-mail address (a link) and a phone number (a code) alike. A subscriber
 * already confirmed is told nothing new (the answer is the same either way, so it does not reveal
 * who subscribed). Anyone can type an address or a number into the public form, so asking again
 * within CONFIRMATION_RESEND_MS sends nothing, and the page's cap of confirmations waiting holds.
 * Otherwise a new secret replaces the old one (which stops working) and is sent.
 */
async function optIn(
  db: Executor,
  page: SubscribingPage,
  target: { kind: 'email'; email: string } | { kind: 'sms'; phone: string },
  fields: { componentIds: string[]; audienceIds: string[]; locale: string | null },
  counts: { pendingConfirmations: number } | undefined,
  confirmation: { hash: string; send: (t: Messages) => Promise<unknown> },
) {
  const { kind } = target
  const existing = await existingSubscriber(db, page.id, kind === 'email' ? { email: target.email } : { phone: target.phone })
  if (existing?.confirmedAt) return { kind, id: existing.id, confirmed: true }
  if (existing?.confirmationSentAt && Date.now() - existing.confirmationSentAt.getTime() < CONFIRMATION_RESEND_MS)
    return { kind, id: existing.id, confirmed: false }
  if (counts && counts.pendingConfirmations >= PUBLIC_LIMITS.pendingConfirmationsPerPage)
    throw refuse('this page has too many subscriptions waiting for their confirmation: try again tomorrow')
  if (existing) await renewConfirmation(db, existing.id, confirmation.hash, fields.locale, fields.audienceIds)
  const row =
    existing ??
    (await insertSubscriber(db, {
      organizationId: page.organizationId,
      pageId: page.id,
      ...target,
      componentIds: fields.componentIds,
      audienceIds: fields.audienceIds,
      confirmTokenHash: confirmation.hash,
      unsubscribeToken: newToken(),
      confirmedAt: null,
      confirmationSentAt: new Date(),
      locale: fields.locale,
    }))
  await confirmation.send(messagesOf(fields.locale ?? row.locale ?? page.locales[0] ?? 'en'))
  return { kind, id: row.id, confirmed: false }
}

/**
 * Adds a subscriber to a page. E-mail and SMS are double opt-in (`optIn`): a confirmation link or
 * code is sent and nothing else until it is used. A webhook subscriber is confirmed at once and
 * gets its signing secret, shown once; a Slack or Teams channel is confirmed at once too. Through
 * the public form they are capped (PUBLIC_LIMITS; 429 past them, nothing stored or sent).
 */
export async function subscribe(db: Executor, context: SubscribeContext, page: SubscribingPage, subscription: Subscription) {
  const field = 'email' in subscription ? 'email' : 'phone' in subscription ? 'phone' : 'url'
  if (!page.allowSubscribers) throw invalidField(field, 'this status page does not take subscribers')
  const componentIds = subscription.componentIds ?? []
  const audienceIds = [...(context.audienceIds ?? [])]
  // A component tagged for audiences the subscriber is not of is not theirs to follow: as unknown as another page's.
  const known = new Set(
    (await componentsOfPage(db, page, componentIds.filter(isUuid)))
      .filter((row) => isSeenBy(audienceIds, row.audienceIds))
      .map((row) => row.id),
  )
  const unknown = componentIds.findIndex((id) => !known.has(id))
  if (unknown >= 0) throw invalidField(`componentIds/${unknown}`, 'is not a component of this status page')

  const { publicFrom } = context
  const locale = subscriberLocale(page, subscription.locale, context.readerLanguages)
  let counts: Awaited<ReturnType<typeof publicSubscriptionCounts>> | undefined
  if (publicFrom) {
    await lockPageSubscriptions(db, page.id)
    counts = await publicSubscriptionCounts(db, page.id, publicFrom)
  }

  if ('email' in subscription) {
    const email = subscription.email.trim()
    const token = newToken()
    return optIn(db, page, { kind: 'email', email }, { componentIds, audienceIds, locale }, counts, {
      hash: tokenHash(token),
      send: (t) =>
        context.notifier.queueEmail(db, {
          organizationId: page.organizationId,
          kind: 'statuspage.subscription_confirmation',
          to: email,
          subject: t.email.confirmSubject(page.name),
          text: t.email.confirmBody(page.name, context.confirmUrl(token, t.language)).join('\n'),
        }),
    })
  }

  if ('phone' in subscription) {
    const { phone } = subscription
    if (!context.notifier.config.twilio)
      throw invalidField('phone', 'this service sends no text messages: SMS subscriptions need Twilio (the TWILIO_* settings)')
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
    return optIn(db, page, { kind: 'sms', phone }, { componentIds, audienceIds, locale }, counts, {
      hash: smsCodeHash(page.id, phone, code),
      send: (t) =>
        context.notifier.queueMessage(db, {
          organizationId: page.organizationId,
          kind: 'statuspage.subscription_confirmation',
          channel: 'sms',
          to: phone,
          text: t.sms.code(page.name, code),
        }),
    })
  }

  try {
    await checkTarget(subscription.url, context.outbound)
  } catch (error) {
    if (error instanceof TargetRefused) throw invalidField('url', error.message)
    throw error
  }
  const kind = subscription.kind ?? 'webhook'
  if (await existingSubscriber(db, page.id, { url: subscription.url, kind }))
    throw new ConflictError('url: this URL is subscribed to the page already')
  // Slack and Teams channels count with webhooks: each is a URL we post to whenever the page changes.
  if (counts && counts.webhooksPerAddress >= PUBLIC_LIMITS.webhooksPerAddressPerDay)
    throw refuse(`at most ${PUBLIC_LIMITS.webhooksPerAddressPerDay} webhook subscriptions a day from one address: try again tomorrow`)
  if (counts && counts.publicWebhooks >= PUBLIC_LIMITS.webhooksPerPage)
    throw refuse('this page takes no more webhook subscribers from its public form: ask its owner to add yours')
  // A channel's incoming webhook URL is its own credential: what is posted to it is not signed.
  const secret = kind === 'webhook' ? `whsec_${randomBytes(24).toString('base64')}` : null
  const row = await insertSubscriber(db, {
    organizationId: page.organizationId,
    pageId: page.id,
    kind,
    url: subscription.url,
    secret,
    componentIds,
    audienceIds,
    confirmTokenHash: null,
    unsubscribeToken: newToken(),
    confirmedAt: new Date(),
    createdFrom: publicFrom ?? null,
    locale,
  })
  return { kind, id: row.id, confirmed: true, ...(secret ? { secret } : {}) }
}
