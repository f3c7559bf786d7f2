import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { subscribe, type StatusPageUpdateRequested } from '@svc/events'
import { workEach, type JobQueue } from '@svc/jobs'
import type { IncidentImpact } from '../model.js'
import { componentsFollowingServices, componentsUnderMaintenance } from '../queries/components.js'
import { incidentById } from '../queries/incidents.js'
import type { SubscriberNotifications } from '../subscribers/notifications.js'
import { publicIncidentName, publicWords } from './public-words.js'
import { openRecord, recordUpdate } from './records.js'

export const ALERT_FOLLOW_QUEUE = 'statuspages.alert-follow'

/** An alert's priority as the impact of the incident that follows it. */
const impactOf: Record<StatusPageUpdateRequested['alert']['priority'], IncidentImpact> = {
  P1: 'critical',
  P2: 'major',
  P3: 'minor',
  P4: 'none',
  P5: 'none',
}

async function openIncidentFor(db: Executor, pageId: string, alertId: string) {
  const row = await db
    .selectFrom('divinux.statusIncidents')
    .select('id')
    .where('pageId', '=', pageId)
    .where('alertId', '=', alertId)
    .where('resolvedAt', 'is', null)
    .executeTakeFirst()
  return row && incidentById(db, row.id, true)
}

/**
 * The status pages' side of the workflow action `update_status_page` (an event from alerting,
 * which never writes these tables): on each page with components linked to the alert's service,
 * an incident is opened for the alert (a draft unless the workflow publishes it), named after the
 * page's affected components and never the internal alert title (public-words.ts), moved to
 * `identified` when the alert is acknowledged, and resolved with it. Each step looks at the
 * incident's state first, so an event delivered twice does nothing twice.
 */
export async function followAlert(
  db: Executor,
  notifications: SubscriberNotifications,
  event: StatusPageUpdateRequested,
): Promise<string[]> {
  const components = await componentsFollowingServices(db, event.organizationId, event.services ?? [event.alert.service])
  // A component under maintenance is not opened an incident for its planned work's alerts
  // (decision 0015, "Maintenance quiets monitoring"); one opened before still follows its alert.
  const resting =
    event.trigger === 'alert.resolved'
      ? new Set<string>()
      : await componentsUnderMaintenance(
          db,
          components.map((component) => component.id),
        )
  const pages = [...new Set(components.map((component) => component.pageId))]
  const changed: string[] = []
  for (const pageId of pages) {
    await db.selectFrom('divinux.statusPages').select('id').where('id', '=', pageId).forUpdate().executeTakeFirst()
    const existing = await openIncidentFor(db, pageId, event.alertId)
    const onPage = components.filter((component) => component.pageId === pageId && (existing || !resting.has(component.id)))
    if (onPage.length === 0) continue
    const statuses = new Map(onPage.map((component) => [component.id, event.componentStatus]))
    const names = onPage.map((component) => component.name)
    const common = { createdBy: null, notify: true }
    if (event.trigger === 'alert.resolved') {
      if (!existing) continue
      await recordUpdate(db, notifications, existing, { ...common, status: 'resolved', body: publicWords.resolved, statuses: new Map() })
    } else if (!existing) {
      await openRecord(
        db,
        notifications,
        {
          organizationId: event.organizationId,
          pageId,
          kind: 'incident',
          name: publicIncidentName(event.componentStatus, names),
          status: 'investigating',
          impact: impactOf[event.alert.priority],
          published: event.publish,
          alertId: event.alertId,
          workflowId: event.workflowId,
          createdBy: null,
        },
        { ...common, status: 'investigating', body: publicWords.investigating(names), statuses },
      )
    } else if (event.trigger === 'alert.acknowledged' && existing.status === 'investigating') {
      await recordUpdate(db, notifications, existing, {
        ...common,
        status: 'identified',
        body: publicWords.identified,
        statuses: new Map(),
      })
    } else continue
    changed.push(pageId)
  }
  return changed
}

export async function startFollowingAlerts(deps: {
  database: Database
  jobs: JobQueue
  notifications: SubscriberNotifications
  changed: (pageId: string) => void
  log: FastifyBaseLogger
}): Promise<void> {
  await subscribe(deps.jobs, 'statuspage.update_requested', ALERT_FOLLOW_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
  await workEach<StatusPageUpdateRequested>(deps.jobs, ALERT_FOLLOW_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, async (job) => {
    const changed = await deps.database.db.transaction().execute((trx) => followAlert(trx, deps.notifications, job.data))
    for (const pageId of changed) deps.changed(pageId)
    if (changed.length > 0)
      deps.log.info({ alertId: job.data.alertId, trigger: job.data.trigger, pages: changed.length }, 'status pages follow the alert')
  })
}
