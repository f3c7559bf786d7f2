import { sql } from 'kysely'
import { deleteInBatches, type Executor } from '@svc/db'

const DAY_MS = 86_400_000

export interface AlertingRetention {
  alertEvents: number
  notificationAttempts: number
  webhookDeliveries: number
}

/**
 * Alerting's history kept bounded (decision 0022), in batches of short deletes:
 * - the timeline events of alerts resolved more than ALERT_EVENT_RETENTION_DAYS ago (repeats are
 *   already one counted row per alert, decision 0012); the alert row keeps its times, which is
 *   what reports and response statistics read;
 * - notification attempts past NOTIFICATION_RETENTION_DAYS, of resolved alerts only (an open
 *   alert's attempts are what keeps it from paging a person twice for one step);
 * - ingestion delivery records (what answers a retried delivery) and finished outbound webhook
 *   deliveries past WEBHOOK_DELIVERY_RETENTION_DAYS.
 */
export async function pruneAlertingHistory(db: Executor, retention: AlertingRetention, now = new Date()) {
  const before = (days: number) => new Date(now.getTime() - days * DAY_MS)
  return {
    alertEventsRemoved: await deleteInBatches(
      db,
      'divinux.alert_events',
      sql`created_at < ${before(retention.alertEvents)}
          and exists (select 1 from divinux.alerts
                       where alerts.id = alert_events.alert_id and alerts.status = 'resolved' and alerts.resolved_at < ${before(retention.alertEvents)})`,
    ),
    notificationAttemptsRemoved: await deleteInBatches(
      db,
      'divinux.notification_attempts',
      sql`created_at < ${before(retention.notificationAttempts)}
          and not exists (select 1 from divinux.alerts where alerts.id = notification_attempts.alert_id and alerts.status <> 'resolved')`,
    ),
    ingestionDeliveriesRemoved: await deleteInBatches(
      db,
      'divinux.webhook_deliveries',
      sql`created_at < ${before(retention.webhookDeliveries)}`,
    ),
    outboundDeliveriesRemoved: await deleteInBatches(
      db,
      'divinux.outbound_webhook_deliveries',
      sql`created_at < ${before(retention.webhookDeliveries)} and status in ('delivered', 'failed')`,
    ),
  }
}
