import { sql } from 'kysely'
import { DEFAULT_INVESTIGATION_BOUNDS, type AiConfig } from '@svc/config'
import type { Database, Executor } from '@svc/db'
import type { DeployRecorded, IncidentChanged } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import { requestAnalysis } from '../analyses/request.js'
import { agentSwitches } from '../queries/agents.js'

// Re-investigation (decision 0021, "Re-investigation"): an incident that changes materially is
// investigated again: services joined it (alerting's `incident.changed`), or the deploy its
// investigation suspected was rolled back (`deploy.recorded` of kind rollback). Only incidents
// investigated before are; changes within the debounce window make one job (pg-boss's
// sendDebounced, keyed by incident), and the request is refused like any other past the budget.

/** The insights surface's copies of the events, and the debounced re-investigation jobs. */
export const INCIDENT_CHANGED_QUEUE = 'insights.incident-changed'
export const DEPLOY_RECORDED_QUEUE = 'insights.deploy-recorded'
export const REINVESTIGATE_QUEUE = 'insights.reinvestigate'

export interface ReinvestigateJob {
  organizationId: string
  incidentId: string
  reason: string
}

/** How far back a suspect deploy's rollback still concerns an investigation. */
const ROLLBACK_LOOKBACK_HOURS = 24

/** Whether the incident of alerting was investigated before. */
async function wasInvestigated(db: Executor, organizationId: string, incidentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.analyses')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('sourceProduct', '=', 'alerting')
    .where('incidentId', '=', incidentId)
    .where('subject', '=', 'incident')
    .executeTakeFirst()
  return row !== undefined
}

/** Incidents whose latest investigation of the last day suspected a deploy of this service first. */
async function incidentsSuspecting(db: Executor, organizationId: string, service: string): Promise<string[]> {
  const rows = await sql<{ incidentId: string }>`
    select distinct incident_id as "incidentId" from divinux.analyses
    where organization_id = ${organizationId} and source_product = 'alerting' and subject = 'incident'
      and status = 'completed' and completed_at > now() - make_interval(hours => ${ROLLBACK_LOOKBACK_HOURS})
      and findings -> 'suspectDeploys' -> 0 ->> 'service' = ${service}`.execute(db)
  return rows.rows.map((row) => row.incidentId)
}

export function reinvestigation(database: Database, jobs: JobQueue, ai: AiConfig) {
  const debounce = (ai.investigation ?? DEFAULT_INVESTIGATION_BOUNDS).reinvestigateDebounceSeconds
  const schedule = async (job: ReinvestigateJob) => {
    if (!(await agentSwitches(database.db, job.organizationId)).investigator) return
    await jobs.sendDebounced(REINVESTIGATE_QUEUE, job, { startAfter: debounce }, debounce, `${job.organizationId}:${job.incidentId}`)
  }
  return {
    async onIncidentChanged(event: IncidentChanged): Promise<void> {
      if (!(await wasInvestigated(database.db, event.organizationId, event.incidentId))) return
      await schedule({ organizationId: event.organizationId, incidentId: event.incidentId, reason: `${event.services.join(', ')} joined` })
    },
    async onDeployRecorded(event: DeployRecorded): Promise<void> {
      if (event.kind !== 'rollback') return
      for (const incidentId of await incidentsSuspecting(database.db, event.organizationId, event.service))
        await schedule({ organizationId: event.organizationId, incidentId, reason: `${event.service} was rolled back` })
    },
    /** Asks for the investigation; one already running, or a spent budget, is left to stand. */
    async reinvestigate(job: ReinvestigateJob) {
      const key = { organizationId: job.organizationId, sourceProduct: 'alerting' as const, incidentId: job.incidentId }
      return requestAnalysis(database, jobs, ai, key, { trigger: 'reinvestigation', requestedBy: null, subject: 'incident' })
    },
  }
}
