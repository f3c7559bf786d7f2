import { randomUUID } from 'node:crypto'
import type { Executor } from '@svc/db'
import { storeEvents } from './store.js'

/**
 * The events our own services record (docs/analytics-events.md lists them with their
 * properties), named as Segment's spec names events: `Object Action`, past tense.
 */
export const productEvents = [
  'Organization Created',
  'Member Added',
  'Invitation Accepted',
  'Status Page Published',
  'Check Created',
  'Incident Declared',
  'Analysis Completed',
  'Report Requested',
] as const
export type ProductEvent = (typeof productEvents)[number]

/**
 * Records one product event in the caller's transaction, so it exists exactly when what it
 * describes does. Properties are ids and kinds, never names or addresses (the privacy rule).
 */
export async function trackProductEvent(
  db: Executor,
  event: {
    organizationId: string
    name: ProductEvent
    userId: string | null
    properties?: Record<string, string | number | boolean | null>
  },
): Promise<void> {
  await storeEvents(db, event.organizationId, 'server', [
    {
      messageId: randomUUID(),
      event: event.name,
      userId: event.userId,
      anonymousId: null,
      properties: event.properties ?? {},
      context: {},
      occurredAt: new Date(),
    },
  ])
}
