import type { Executor } from '@svc/db'
import { heldStatuses, setComponentStatuses, type ComponentChange } from '../queries/components.js'
import { worstStatus } from '../model.js'

/**
 * Components follow what holds them: each takes the worst status its published open incidents
 * and active maintenances give it, and `operational` when nothing holds it any more (so resolving
 * an incident returns its components unless another incident or a maintenance still holds them).
 * Called after any change to what holds `componentIds`; answers the changes it made.
 */
export async function settleComponents(db: Executor, pageId: string, componentIds: string[]): Promise<ComponentChange[]> {
  if (componentIds.length === 0) return []
  const held = await heldStatuses(db, componentIds)
  return setComponentStatuses(db, pageId, new Map(componentIds.map((id) => [id, worstStatus(held.get(id) ?? [])])))
}
