import type { AddressInfo } from 'node:net'
import type { TestContext } from '../teardown.js'

/** A message the server accepted, parsed: envelope, headers, text and HTML bodies. */
export interface ReceivedMail {
  envelopeFrom: string
  envelopeTo: string[]
  from: { name: string; address: string }
  subject: string
  text: string
  html: string
  /** The Message-ID header, angle brackets included. */
  messageId: string
  /** Every header as written (unfolded), by its lower-case name, e.g. `list-unsubscribe`. */
  headers: Record<string, string>
  /** When the message was accepted (Date.now()). */
  at: number
}

/** A reply to RCPT TO: a code and text, e.g. `{ code: 451, message: 'try later' }`, or undefined to accept. */
export type RecipientReply = (address: string, attempt: number) => { code: number; message: string } | undefined

export interface SmtpTestServer {
  url: string
  received: ReceivedMail[]
  /** RCPT TO attempts per address, accepted or not. */
  attempts: Map<string, number>
  /** Messages whose DATA was read but never answered (`stall`): the sender still waits on them. */
  stalled: ReceivedMail[]
}

export interface SmtpServerOptions {
  /**
   * Leaves the n-th message (1-based, over all connections) unanswered after its DATA: the
   * sender has handed the message over and waits for the 250 that never comes, as it does when
   * it is killed in the middle of a send.
   */
  stall?: (n: number) => boolean
}

/**
 * A plain-text SMTP server on loopback (smtp-server, the library nodemailer's author keeps for
 * this), so the real nodemailer transport is exercised over a real socket: accepted messages,
 * temporary (4xx) and permanent (5xx) refusals.
 */
export async function startSmtpServer(
  t: TestContext,
  replyTo: RecipientReply = () => undefined,
  options: SmtpServerOptions = {},
): Promise<SmtpTestServer> {
  const received: ReceivedMail[] = []
  const stalled: ReceivedMail[] = []
  let messages = 0
  const attempts = new Map<string, number>()
  // Loaded here, not at the top: most test processes never start an SMTP server, and mailparser
  // alone costs every process that imports the testkit half a second.
  const [{ SMTPServer }, { simpleParser }] = await Promise.all([import('smtp-server'), import('mailparser')])
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const attempt = (attempts.get(address.address) ?? 0) + 1
      attempts.set(address.address, attempt)
      const reply = replyTo(address.address, attempt)
      if (!reply) return callback()
      callback(Object.assign(new Error(reply.message), { responseCode: reply.code }))
    },
    onData(stream, session, callback) {
      messages += 1
      const stall = options.stall?.(messages) ?? false
      simpleParser(stream)
        .then((mail) => {
          ;(stall ? stalled : received).push({
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            envelopeTo: session.envelope.rcptTo.map((recipient) => recipient.address),
            from: { name: mail.from?.value[0]?.name ?? '', address: mail.from?.value[0]?.address ?? '' },
            subject: mail.subject ?? '',
            text: mail.text ?? '',
            html: typeof mail.html === 'string' ? mail.html : '',
            messageId: mail.messageId ?? '',
            headers: Object.fromEntries(
              mail.headerLines.map(({ key, line }) => [
                key,
                line
                  .slice(line.indexOf(':') + 1)
                  .replace(/\r?\n[ \t]+/g, ' ')
                  .trim(),
              ]),
            ),
            at: Date.now(),
          })
          if (!stall) callback()
        })
        .catch((error: Error) => callback(error))
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.server.address() as AddressInfo
  return { url: `smtp://127.0.0.1:${port}`, received, attempts, stalled }
}
