import { createHmac, timingSafeEqual } from 'node:crypto'
import { LinearWebhookClient } from '@linear/sdk/webhooks'

// What a tracker's webhook says of a ticket, once its signature holds: Jira Cloud signs with the
// secret given when the webhook was registered (`X-Hub-Signature: sha256=<hex HMAC of the body>`),
// Linear with its webhook's signing secret (`Linear-Signature`, checked by the SDK's own client,
// with the signed `webhookTimestamp` within a minute).

/** A ticket's status as the tracker's event gives it. */
export interface TicketEvent {
  ticketId: string
  key: string
  status: string
  /** In the tracker's own terms: Jira's status category `done`, Linear's `completed` or `canceled` states. */
  done: boolean
}

function jiraSignatureHolds(secret: string, raw: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`)
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

function linearSignatureHolds(secret: string, raw: Buffer, header: string | undefined): boolean {
  if (!header) return false
  try {
    return new LinearWebhookClient(secret).verify(raw, header)
  } catch {
    return false
  }
}

/** Whether the request is the tracker's: its signature over the raw body holds. */
export function trackerSignatureHolds(kind: 'jira' | 'linear', secret: string, raw: Buffer, headers: Record<string, unknown>) {
  const header = (name: string) => (typeof headers[name] === 'string' ? (headers[name] as string) : undefined)
  return kind === 'jira'
    ? jiraSignatureHolds(secret, raw, header('x-hub-signature'))
    : linearSignatureHolds(secret, raw, header('linear-signature'))
}

interface JiraEvent {
  webhookEvent?: string
  issue?: { id?: string; key?: string; fields?: { status?: { name?: string; statusCategory?: { key?: string } } } }
}
interface LinearEvent {
  type?: string
  data?: { id?: string; identifier?: string; state?: { name?: string; type?: string } }
}

/** The ticket status an event carries, or undefined for an event about something else. */
export function ticketEventOf(kind: 'jira' | 'linear', body: unknown): TicketEvent | undefined {
  if (kind === 'jira') {
    const { webhookEvent, issue } = body as JiraEvent
    const status = issue?.fields?.status
    if (!webhookEvent?.startsWith('jira:issue_') || !issue?.id || !issue.key || !status?.name) return undefined
    return { ticketId: issue.id, key: issue.key, status: status.name, done: status.statusCategory?.key === 'done' }
  }
  const { type, data } = body as LinearEvent
  if (type !== 'Issue' || !data?.id || !data.identifier || !data.state?.name) return undefined
  return {
    ticketId: data.id,
    key: data.identifier,
    status: data.state.name,
    done: data.state.type === 'completed' || data.state.type === 'canceled',
  }
}
