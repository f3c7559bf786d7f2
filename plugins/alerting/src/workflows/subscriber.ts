import { sql } from 'kysely'
import { type AlertEventSubscriber } from '../alerts/index.js'
import type { KnownWorkflows, WorkflowRunner } from './runner.js'

/** Workflows on the alert event bus: each event queues the runs of the workflows it triggers (`alert.<type>`). */
export function workflowSubscriber(workflows: Pick<WorkflowRunner, 'queueRuns' | 'wake'>): AlertEventSubscriber {
  return {
    wantsCreated: (organization) =>
      sql`exists (select 1 from divinux.workflows flow where flow.organization_id = ${organization} and flow.enabled and flow.trigger = 'alert.created')`,
    async handle(trx, events) {
      let runs = 0
      const known: KnownWorkflows = new Map()
      for (const event of events)
        runs += await workflows.queueRuns(
          trx,
          event.organizationId,
          { trigger: `alert.${event.type}`, eventKey: `alert-event:${event.id}`, alertId: event.alertId, occurredAt: event.createdAt },
          known,
        )
      return runs > 0
    },
    wake: () => workflows.wake(),
  }
}
