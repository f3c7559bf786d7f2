import type { Executor } from '@svc/db'
import { heldStatuses, setComponentStatuses, type ComponentChange } from '../queries/components.js'
import { worstStatus } from '../model.js'

/**
 * Components follow what holds them: each takes the worst status its published open incidents
 * and active maintenances give it, and `operational` when nothing holds it any more (so resolving
 * an incident returns its components unless another incident or a maintenance still holds them).
 * The checks a component follows hold it too, but what they hold is not declared: it shows on the
 * component and reaches the banner only where the page follows checks (decision 0015, "The banner"),
 * and not while a maintenance holds the component.
 * Called after any change to what holds `componentIds`; answers the changes it made.
 */
export async function settleComponents(db: Executor, pageId: string, componentIds: string[]): Promise<ComponentChange[]> {
  if (componentIds.length === 0) return []
  const held = await heldStatuses(db, componentIds)
  const states = [...held].map(([id, { declared, checks }]) => {
    const declaredStatus = worstStatus(declared)
    // Planned work shows as maintenance, not as the outage its checks see (decision 0015,
    // "Maintenance quiets monitoring"); an incident declared meanwhile still shows.
    const followed = declared.includes('under_maintenance') ? [] : checks
    return [id, { status: worstStatus([declaredStatus, ...followed]), declaredStatus }] as const
  })
  return setComponentStatuses(db, pageId, new Map(states))
}
