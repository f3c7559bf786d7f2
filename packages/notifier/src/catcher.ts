import type { Channel, MessageProvider } from './message.js'

/** The channels the catcher stands in for: the ones with a provider of their own (chat and webhooks have their targets). */
export const CATCHABLE: readonly Channel[] = ['email', 'sms', 'voice', 'push']

const symbols: Partial<Record<Channel, string>> = { email: 'e-mail', sms: 'SMS', voice: 'call', push: 'push' }

/**
 * Text as one line a terminal shows as written: control characters (an escape sequence could
 * rewrite the screen, a carriage return the line), line separators and bidirectional overrides
 * are printed as `\u…` escapes. An alert title reaches this line from any sender.
 */
export function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- control characters are what it replaces
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

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
      const about = message.subject ? ` “${printable(message.subject)}”` : ''
      print(`captured ${symbols[channel] ?? channel} to ${printable(message.to)}${about} (${message.id})${readAt ? `: ${readAt}` : ''}`)
      return { messageId: `captured-${message.id}` }
    },
  }
}
