import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, inTransaction, workEach, type JobQueue } from '@svc/jobs'
import type { MaintenanceStatus } from '../model.js'
import { incidentById, type IncidentRow } from '../queries/incidents.js'
import { recordUpdate } from '../incidents/records.js'
import type { SubscriberNotifications } from '../subscribers/notifications.js'
import { quietMonitoring, type MonitoringQuieter } from './quiet.js'

export const MAINTENANCE_QUEUE = 'statuspages.maintenance'

interface MaintenanceJob {
  maintenanceId: string
  to: 'in_progress' | 'completed'
  /** The window's edge the job was queued for: a job for a window since moved does nothing. */
  at: string
}

/** What the public reads when a maintenance starts or ends on its own, as Statuspage words it. */
export const automaticWords = {
  in_progress: 'Scheduled maintenance is currently in progress. We will provide updates as necessary.',
  completed: 'The scheduled maintenance has been completed.',
}

export interface MaintenanceSchedulerOptions {
  database: Database
  jobs: JobQueue
  notifications: SubscriberNotifications
  changed: (pageId: string) => void
  log: FastifyBaseLogger
  quieter?: MonitoringQuieter
}

/**
 * Maintenance windows start and complete at their times by pg-boss jobs queued for those times
 * (`startAfter`), in the transaction that schedules or moves the window: no timers of our own,
 * and a replica that stops leaves them to the others. Each job checks that its window is still
 * the one it was queued for and that the maintenance still wants it (auto start, auto complete).
 */
export function createMaintenanceScheduler(options: MaintenanceSchedulerOptions) {
  const { database, jobs, notifications, changed, log, quieter } = options

  async function run(job: MaintenanceJob): Promise<void> {
    const pageId = await database.db.transaction().execute(async (trx) => {
      const maintenance = await incidentById(trx, job.maintenanceId, true)
      if (!maintenance || maintenance.kind !== 'maintenance') return undefined
      const status = maintenance.status as MaintenanceStatus
      const starting = job.to === 'in_progress'
      const edge = starting ? maintenance.scheduledFor : maintenance.scheduledUntil
      if (edge?.toISOString() !== job.at) return undefined
      if (
        starting
          ? !maintenance.autoStart || status !== 'scheduled'
          : !maintenance.autoComplete || (status !== 'in_progress' && status !== 'verifying')
      )
        return undefined
      const { row } = await recordUpdate(trx, notifications, maintenance, {
        status: job.to,
        body: automaticWords[job.to],
        statuses: new Map(),
        createdBy: null,
        notify: true,
      })
      await quietMonitoring(trx, quieter, row)
      return maintenance.pageId
    })
    if (pageId) {
      changed(pageId)
      log.info({ maintenanceId: job.maintenanceId, status: job.to }, 'maintenance moved at its time')
    }
  }

  return {
    /** Queues the window's start and end in the caller's transaction. */
    async schedule(db: Executor, maintenance: Pick<IncidentRow, 'id' | 'scheduledFor' | 'scheduledUntil'>): Promise<void> {
      for (const [to, at] of [
        ['in_progress', maintenance.scheduledFor],
        ['completed', maintenance.scheduledUntil],
      ] as const) {
        if (!at) continue
        await jobs.send(MAINTENANCE_QUEUE, { maintenanceId: maintenance.id, to, at: at.toISOString() } satisfies MaintenanceJob, {
          db: inTransaction(db),
          startAfter: at,
          singletonKey: `${maintenance.id}:${to}:${at.toISOString()}`,
        })
      }
    },
    async start(): Promise<void> {
      await ensureQueue(jobs, MAINTENANCE_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
      await workEach<MaintenanceJob>(jobs, MAINTENANCE_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, (job) => run(job.data))
    },
    stop: () => jobs.offWork(MAINTENANCE_QUEUE),
  }
}

export type MaintenanceScheduler = ReturnType<typeof createMaintenanceScheduler>
