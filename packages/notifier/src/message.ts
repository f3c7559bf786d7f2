/** The channels an outbox row may name (ARCHITECTURE.md); e-mail is the one with a provider today. */
export const channels = ['email', 'sms', 'voice', 'push', 'chat', 'webhook'] as const
export type Channel = (typeof channels)[number]

/** `pending` until a delivery settles it: `sent`, `failed`, or `held` when no provider can carry it. */
export type OutboxStatus = 'pending' | 'sent' | 'held' | 'failed'

/** An e-mail as the caller writes it; `kind` says what it is for (e.g. `member.invitation`). */
export interface OutboundEmail {
  organizationId: string | null
  kind: string
  to: string
  subject: string
  text: string
  html?: string
}

/** What a provider needs to carry one e-mail. */
export interface EmailEnvelope {
  to: string
  subject: string
  text: string
  html?: string
}

export interface EmailProvider {
  /** Recorded on the outbox row, e.g. `smtp`. */
  readonly name: string
  /** Resolves with the provider's id for the message; rejects with a DeliveryError. */
  send(email: EmailEnvelope): Promise<{ messageId: string }>
}

/** A delivery that did not happen; `permanent` when trying again cannot help (a 5xx answer). */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'DeliveryError'
  }
}
