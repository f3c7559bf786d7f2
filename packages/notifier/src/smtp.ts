import { createTransport } from 'nodemailer'
import { DeliveryError, type EmailEnvelope, type EmailProvider } from './message.js'

interface SmtpFailure extends Error {
  code?: string
  responseCode?: number
}

/** A notifier's batch (BATCH_SIZE in notifier.ts, 50) is sent over these side by side, two or three messages a connection. */
const SMTP_CONNECTIONS = 20

/**
 * E-mail through an SMTP server with nodemailer. The URL carries host, port, credentials and
 * TLS (`smtps://` for implicit TLS; `smtp://` upgrades with STARTTLS when offered).
 * Connections are pooled (20), each carrying up to 500 messages before it is renewed. SMTP
 * answers each message in turn on a connection, so a batch over few connections waits for their
 * round trips one after another (decision 0011: at 300 pages a second, 5 connections left e-mail
 * p99 at 17 s, 20 at 3 s).
 * Timeouts are shorter than nodemailer's (2 minutes to connect) so a dead server costs a job
 * attempt, not a worker for minutes.
 */
export function smtpProvider(url: string, from: string): EmailProvider {
  // Pooled: a paging burst reuses connections instead of a TCP and SMTP handshake per message.
  const transport = createTransport(
    {
      url,
      pool: true,
      maxConnections: SMTP_CONNECTIONS,
      maxMessages: 500,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    },
    { from },
  )
  // A message sent twice (its sender died after the server took it, before the outbox said so)
  // carries the same Message-ID both times, so receiving servers and clients can drop the repeat.
  const domain = /@([^>\s@]+)>?\s*$/.exec(from)?.[1] ?? 'incident-platform.invalid'
  return {
    name: 'smtp',
    close: () => transport.close(),
    async send(email: EmailEnvelope) {
      try {
        const info = await transport.sendMail({
          ...(email.id ? { messageId: `<${email.id}@${domain}>` } : {}),
          to: email.to,
          subject: email.subject,
          text: email.text,
          ...(email.html ? { html: email.html } : {}),
          // RFC 2369's List-Unsubscribe, and RFC 8058's one-click POST that mailbox providers
          // (Gmail, Yahoo) require of bulk senders: the client POSTs to the URL, no page to read.
          ...(email.unsubscribeUrl
            ? { list: { unsubscribe: email.unsubscribeUrl }, headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } }
            : {}),
        })
        return { messageId: info.messageId }
      } catch (error) {
        const failure = error as SmtpFailure
        // RFC 5321: 4xx replies are transient, 5xx permanent; no reply at all (connection, TLS, timeout) may pass.
        const permanent = failure.responseCode !== undefined && failure.responseCode >= 500
        throw new DeliveryError(`smtp: ${failure.message}`, permanent, { cause: error })
      }
    },
  }
}
