import type { Executor } from '@svc/db'
import { incidentComponents, type IncidentRow } from '../queries/incidents.js'

/** What a maintenance asks the rest of the product to quiet, and when (alerting's `MaintenanceQuiet`). */
export interface QuietRequest {
  organizationId: string
  maintenanceId: string
  name: string
  /** The services its components follow (their `alertServices`, names in the service catalog). */
  services: string[]
  /** The synthetic checks its components follow. */
  checkIds: string[]
  startsAt: Date
  endsAt: Date
  /** Completed, cancelled or deleted: nothing is quieted from now on. */
  over: boolean
}

/**
 * How the product quiets monitoring for a maintenance (decision 0015, "Maintenance quiets
 * monitoring"), given by the product's composition: alerting silences, synthetics' reads.
 */
export interface MonitoringQuieter {
  /** Keeps the maintenance's silences in step with it, in the caller's transaction. */
  silence(db: Executor, request: QuietRequest): Promise<void>
  /** The checks that follow any of these components. */
  checksFollowing(db: Executor, organizationId: string, componentIds: string[]): Promise<string[]>
}

async function alertServicesOf(db: Executor, componentIds: string[]): Promise<string[]> {
  if (componentIds.length === 0) return []
  const rows = await db.selectFrom('divinux.statusComponents').select('alertServices').where('id', 'in', componentIds).execute()
  return [...new Set(rows.flatMap((row) => row.alertServices))]
}

/**
 * The quieting of a maintenance as it is now, in the caller's transaction; call after anything
 * that changes its window, components or status, and with `deleted` before deleting it. Its window
 * is the scheduled one, from the moment it started when it was started early by hand.
 */
export async function quietMonitoring(
  db: Executor,
  quieter: MonitoringQuieter | undefined,
  maintenance: IncidentRow,
  deleted = false,
): Promise<void> {
  if (!quieter || !maintenance.scheduledFor || !maintenance.scheduledUntil) return
  const { organizationId } = await db
    .selectFrom('divinux.statusIncidents')
    .select('organizationId')
    .where('id', '=', maintenance.id)
    .executeTakeFirstOrThrow()
  const componentIds = (await incidentComponents(db, [maintenance.id])).map((component) => component.componentId)
  const active = maintenance.status === 'in_progress' || maintenance.status === 'verifying'
  const startsAt = active && maintenance.startedAt < maintenance.scheduledFor ? maintenance.startedAt : maintenance.scheduledFor
  await quieter.silence(db, {
    organizationId,
    maintenanceId: maintenance.id,
    name: maintenance.name,
    services: await alertServicesOf(db, componentIds),
    checkIds: await quieter.checksFollowing(db, organizationId, componentIds),
    startsAt,
    endsAt: maintenance.scheduledUntil,
    over: deleted || maintenance.status === 'completed' || maintenance.status === 'cancelled',
  })
}
