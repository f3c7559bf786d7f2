import { sql, type RawBuilder } from 'kysely'
import type { JobQueue } from '@svc/jobs'
import { type AlertEventSubscriber, alertWaitingForBus, urgent } from '../../alerts/index.js'
import { CorrelationBatch, correlateAlert } from './correlate.js'
import { REOPEN_MINUTES } from './rules.js'

/**
 * Whether correlation may put a new alert in an incident: its priority opens one, or its
 * organization has an open incident or one resolved within the reopening window, or may have one
 * before this alert is correlated: an alert of the organization still waits for correlation, or
 * one fired in the same statement (`firedWith`) opens one. Without the last two, the first
 * symptoms of a storm, fired before correlation has opened its incident, would never join it and
 * each would page alone.
 */
export const mayCorrelate = (organization: RawBuilder<unknown>, priority: RawBuilder<unknown>, firedWith?: RawBuilder<unknown>) => sql`
  ${urgent(priority)}
  ${firedWith ? sql`or exists (select 1 from ${firedWith} sibling where sibling.organization_id = ${organization} and ${urgent(sql`sibling.priority`)})` : sql``}
  or ${alertWaitingForBus(organization)}
  or exists (select 1 from divinux.incidents open where open.organization_id = ${organization} and open.status <> 'resolved')
  or exists (select 1 from divinux.incidents recent where recent.organization_id = ${organization} and recent.status = 'resolved'
    and recent.resolved_at > now() - make_interval(mins => ${sql.lit(REOPEN_MINUTES)}))`

/**
 * Correlation on the alert event bus: each new alert goes into its incident (correlate.ts), all
 * the batch's alerts of an organization read together, the urgent ones placed first. `correlated` runs once they are placed:
 * the escalations that wait for correlation may start (a storm pages once per incident).
 */
export function correlationSubscriber({ jobs, correlated }: { jobs: JobQueue; correlated: () => void }): AlertEventSubscriber {
  return {
    wantsCreated: mayCorrelate,
    async handle(trx, events) {
      const created = events.filter((event) => event.type === 'created')
      if (created.length === 0) return false
      const batch = new CorrelationBatch()
      const byOrganization = new Map<string, string[]>()
      for (const event of created)
        byOrganization.set(event.organizationId, [...(byOrganization.get(event.organizationId) ?? []), event.alertId])
      for (const [organizationId, alertIds] of byOrganization) await batch.prepare(trx, organizationId, alertIds)
      for (const alertId of batch.placingOrder(created.map((event) => event.alertId))) await correlateAlert(batch, trx, alertId)
      await batch.flush(trx, jobs)
      return true
    },
    wake: correlated,
  }
}
