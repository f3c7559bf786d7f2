import type { Channel, MessageProvider } from './message.js'

/** The channels the catcher stands in for: the ones with a provider of their own (chat and webhooks have their targets). */
export const CATCHABLE: readonly Channel[] = ['email', 'sms', 'voice', 'push']

const symbols: Partial<Record<Channel, string>> = { email: 'e-mail', sms: 'SMS', voice: 'call', push: 'push' }

/**
 * The development catcher (`pnpm start`, CATCH_MESSAGES): it takes a message no provider is
 * configured for, sends nothing off the machine, and prints one line a person can read, with
 * where to read the whole message (the development outbox page). The outbox row is `captured`.
 * Only the recipient and subject are printed: a body may hold a code or an acknowledgement link.
 */
export function catcherProvider(channel: Channel, print: (line: string) => void, readAt?: string): MessageProvider {
  return {
    name: 'catcher',
    captures: true,
    async send(message) {
      const about = message.subject ? ` “${message.subject}”` : ''
      print(`captured ${symbols[channel] ?? channel} to ${message.to}${about} (${message.id})${readAt ? `: ${readAt}` : ''}`)
      return { messageId: `captured-${message.id}` }
    },
  }
}
