/** The channels an outbox row may name (ARCHITECTURE.md); e-mail (SMTP), SMS and voice (Twilio) and push (web push) have providers. */
export const channels = ['email', 'sms', 'voice', 'push', 'chat', 'webhook'] as const
export type Channel = (typeof channels)[number]

/**
 * `pending` until a delivery settles it: `sent`, `failed`, or `held` when no provider can carry it;
 * `delivered` when the provider reports it reached the recipient (Twilio's status callbacks);
 * `captured` when the development catcher took it instead (`pnpm start`): nothing left the machine.
 */
export type OutboxStatus = 'pending' | 'sent' | 'delivered' | 'held' | 'failed' | 'captured'

/** A message as the caller writes it, on any channel; for SMS and voice `to` is an E.164 number. */
export interface OutboundMessageRequest {
  organizationId: string | null
  channel: Channel
  kind: string
  to: string
  subject?: string
  text: string
  html?: string
  /**
   * Where the recipient leaves what this message came from, in one click (RFC 8058: the URL takes
   * a POST). E-mail carries it as `List-Unsubscribe` and `List-Unsubscribe-Post`.
   */
  unsubscribeUrl?: string
}

/** What a provider needs to carry one message; `id` is the outbox row's. */
export interface OutboundMessage {
  id: string
  to: string
  subject: string
  text: string
  html?: string
  unsubscribeUrl?: string
}

export interface MessageProvider {
  /** Recorded on the outbox row, e.g. `smtp`, `twilio`. */
  readonly name: string
  /** The development catcher: what it takes is `captured`, not `sent`. */
  readonly captures?: boolean
  /** Lets go of pooled connections when the service stops. */
  close?(): void
  /** Resolves with the provider's id for the message; rejects with a DeliveryError. */
  send(message: OutboundMessage): Promise<{ messageId: string }>
}

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
  /** The outbox message's id: its Message-ID is made from it, so a repeat is recognisable. */
  id?: string
  to: string
  subject: string
  text: string
  html?: string
  /** A one-click unsubscribe URL (RFC 8058), written as `List-Unsubscribe` and `List-Unsubscribe-Post`. */
  unsubscribeUrl?: string
}

export interface EmailProvider {
  /** Recorded on the outbox row, e.g. `smtp`. */
  readonly name: string
  /** Lets go of pooled connections when the service stops. */
  close?(): void
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
