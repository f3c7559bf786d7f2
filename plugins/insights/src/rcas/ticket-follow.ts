import type { Executor } from '@svc/db'
import type { TicketStatusChanged } from '@svc/events'
import { actionItemOfId, updateActionItem } from '../queries/rcas.js'

/** Insights' copy of `ticket.status_changed`: an RCA action item follows its ticket. */
export const TICKET_STATUS_QUEUE = 'insights.ticket-status'

/**
 * An action item follows its ticket (decision 0031, "Action items as tickets"): done in the
 * tracker makes it done (stamped); reopened there makes a done item open again. Other moves of
 * the ticket (In Progress) leave the item as its people keep it.
 */
export async function followTicket(db: Executor, event: TicketStatusChanged): Promise<void> {
  if (!event.rcaActionItemId) return
  const item = await actionItemOfId(db, event.organizationId, event.rcaActionItemId)
  if (!item) return
  const status = event.done ? 'done' : item.status === 'done' ? 'open' : undefined
  if (!status || status === item.status) return
  await updateActionItem(db, event.organizationId, item.rcaId, item.id, { status })
}
