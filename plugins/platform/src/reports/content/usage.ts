import { usageByEvent, usageSummary } from '@svc/analytics'
import type { Executor } from '@svc/db'
import type { ReportContent } from '../model.js'

/** Product usage of the period, from the analytics summaries: events and active users, by event and by day. */
export async function usageReport(db: Executor, organizationId: string, from: Date, to: Date): Promise<ReportContent> {
  const dayFrom = new Date(`${from.toISOString().slice(0, 10)}T00:00:00Z`)
  const [days, totals] = await Promise.all([
    usageSummary(db, organizationId, { from: dayFrom, to, interval: 'day' }),
    usageByEvent(db, organizationId, dayFrom, to),
  ])
  const events = days.reduce((sum, bucket) => sum + bucket.events, 0)
  return {
    title: 'Product usage',
    from,
    to,
    summary: [
      { label: 'Events', value: String(events) },
      { label: 'Active users', value: String(totals.activeUsers) },
      { label: 'Distinct events', value: String(totals.byEvent.length) },
    ],
    chart: { title: 'Events per day', unit: 'events', points: days.map((bucket) => ({ label: bucket.start, value: bucket.events })) },
    tables: [
      {
        title: 'By event',
        columns: ['Event', 'Events', 'Users'],
        rows: totals.byEvent.map((row) => [row.event, row.events, row.users]),
      },
    ],
    detail: {
      title: 'Usage by day and event',
      columns: ['day', 'event', 'events'],
      rows: days.flatMap((bucket) => Object.entries(bucket.byEvent).map(([event, count]) => [bucket.start, event, count])),
    },
    notes: events === 0 ? ['No product events were recorded in this period.'] : [],
  }
}
