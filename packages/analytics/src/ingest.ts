import { randomUUID } from 'node:crypto'
import type { Executor } from '@svc/db'
import { MAX_CLOCK_AHEAD_MS, MAX_PROPERTIES_BYTES, problemOf, type TrackMessage } from './message.js'
import { redactProperties } from './privacy.js'
import { storeEvents, type AnalyticsEvent } from './store.js'

/** What became of one event of a request, in the order sent. */
export interface EventOutcome {
  index: number
  messageId: string | null
  status: 'stored' | 'duplicate' | 'rejected'
  error?: string
  /** Property paths whose values the privacy rule replaced. */
  redacted?: string[]
}

export interface IngestContext {
  organizationId: string
  /** The signed-in caller: every event is theirs. */
  userId: string
  receivedAt: Date
  /** The batch's `sentAt`: with it, timestamps are corrected for the sender's clock as Segment does. */
  sentAt?: Date
  /** Events that happened before this are past retention: refused. */
  oldestAccepted: Date
}

type Prepared = { event: AnalyticsEvent; redacted: string[] } | { error: string; messageId: string | null }

/** One message judged: a storable event, or why not (the rest of the batch goes on). */
export function prepareEvent(message: unknown, context: IngestContext): Prepared {
  const messageId = typeof (message as TrackMessage | null)?.messageId === 'string' ? (message as TrackMessage).messageId! : null
  const problem = problemOf(message)
  if (problem) return { error: problem, messageId }
  const track = message as TrackMessage
  if (track.userId !== undefined && track.userId !== context.userId)
    return { error: 'userId: must be the signed-in user’s id (or left out)', messageId }
  const properties = track.properties ?? {}
  if (Buffer.byteLength(JSON.stringify(properties)) > MAX_PROPERTIES_BYTES)
    return { error: `properties: larger than ${MAX_PROPERTIES_BYTES} bytes as JSON`, messageId }

  let occurredAt = track.timestamp ? new Date(track.timestamp) : context.receivedAt
  if (track.timestamp && context.sentAt)
    occurredAt = new Date(context.receivedAt.getTime() - (context.sentAt.getTime() - occurredAt.getTime()))
  if (occurredAt.getTime() > context.receivedAt.getTime() + MAX_CLOCK_AHEAD_MS)
    return { error: 'timestamp: more than a day ahead of the server’s clock', messageId }
  if (occurredAt < context.oldestAccepted) return { error: 'timestamp: older than the analytics retention', messageId }

  const declared = track.context?.declaredPii ?? []
  const redaction = redactProperties(properties, declared)
  const kept: Record<string, unknown> = {}
  if (track.context?.library) kept.library = track.context.library
  if (declared.length > 0) kept.declaredPii = declared
  return {
    event: {
      messageId: messageId ?? randomUUID(),
      event: track.event,
      userId: context.userId,
      anonymousId: track.anonymousId ?? null,
      properties: redaction.properties,
      context: kept,
      occurredAt,
    },
    redacted: redaction.redacted,
  }
}

/**
 * Judges every message and stores the good ones in one statement: each gets an outcome, a bad
 * one never costs the others their place. Two messages of one request with the same id: the
 * second is a duplicate.
 */
export async function ingestEvents(db: Executor, messages: readonly unknown[], context: IngestContext): Promise<EventOutcome[]> {
  const outcomes: EventOutcome[] = []
  const storable: AnalyticsEvent[] = []
  const seen = new Set<string>()
  for (const [index, message] of messages.entries()) {
    const prepared = prepareEvent(message, context)
    if ('error' in prepared) {
      outcomes.push({ index, messageId: prepared.messageId, status: 'rejected', error: prepared.error })
      continue
    }
    const { event, redacted } = prepared
    const key = event.messageId
    const outcome: EventOutcome = { index, messageId: event.messageId, status: 'stored', ...(redacted.length > 0 ? { redacted } : {}) }
    if (seen.has(key)) outcome.status = 'duplicate'
    else {
      seen.add(key)
      storable.push(event)
    }
    outcomes.push(outcome)
  }
  const stored = await storeEvents(db, context.organizationId, 'client', storable)
  for (const outcome of outcomes) if (outcome.status === 'stored' && !stored.has(outcome.messageId!)) outcome.status = 'duplicate'
  return outcomes
}
