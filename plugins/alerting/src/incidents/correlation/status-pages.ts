import { sql } from 'kysely'
import { recordAudit, type AuditContext } from '@svc/audit'
import { jsonb, type Database, type Executor } from '@svc/db'
import { subscribe, type StatusPageIncidentOpened } from '@svc/events'
import { workEach, type JobQueue } from '@svc/jobs'
import { incidentAuditOf, timelineEntry } from '../common.js'
import { addTimeline } from '../queries.js'
import { ruleSetOf } from './queries.js'
import { scoreOf } from './rules.js'

/** Alerting's copy of `statuspage.incident_opened`. */
export const STATUS_INCIDENT_OPENED_QUEUE = 'alerting.status-incident-opened'

const SYSTEM: AuditContext = { actor: { type: 'system' } }

/**
 * A status page incident a person opened joins an open incident by the organization's `service`
 * rule (decision 0019, "Links"): the newest open incident with an alert of a service its
 * components follow, within the rule's window. The link (rule, score, matched values) is alerting's
 * own row; a repeated event finds it there and does nothing. Answers the incident it joined.
 */
export async function correlateStatusIncident(trx: Executor, event: StatusPageIncidentOpened): Promise<string | undefined> {
  const rule = (await ruleSetOf(trx, event.organizationId)).rules.find((candidate) => candidate.kind === 'service')
  if (!rule || rule.kind !== 'service' || event.services.length === 0) return undefined
  const at = new Date(event.at)
  const match = await trx
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.incidents as i', 'i.id', 'l.incidentId')
    .select(['l.incidentId', 'l.service', 'l.linkedAt'])
    .where('l.organizationId', '=', event.organizationId)
    .where('l.open', '=', true)
    .where('l.service', 'in', event.services)
    .where('i.mergedInto', 'is', null)
    .where('l.linkedAt', '>', sql<Date>`${at}::timestamptz - make_interval(mins => ${rule.windowMinutes})`)
    .orderBy('l.linkedAt', 'desc')
    .limit(1)
    .executeTakeFirst()
  if (!match) return undefined
  const gapSeconds = Math.max(0, (at.getTime() - match.linkedAt.getTime()) / 1000)
  const matched = { service: match.service, pageId: event.pageId, name: event.name }
  const linked = await trx
    .insertInto('divinux.incidentStatusLinks')
    .values({
      incidentId: match.incidentId,
      statusIncidentId: event.statusIncidentId,
      organizationId: event.organizationId,
      rule: 'service',
      score: scoreOf('service', gapSeconds, rule.windowMinutes),
      matched: jsonb(matched),
    })
    .onConflict((conflict) => conflict.columns(['incidentId', 'statusIncidentId']).doNothing())
    .returning('incidentId')
    .executeTakeFirst()
  if (!linked) return match.incidentId
  await addTimeline(trx, [
    timelineEntry(event.organizationId, match.incidentId, null, 'status_page_incident_linked', {
      statusIncidentId: event.statusIncidentId,
      rule: 'service',
      matched,
    }),
  ])
  const { context, entry } = incidentAuditOf(SYSTEM, event.organizationId, match.incidentId)
  await recordAudit(trx, context, {
    ...entry,
    action: 'incident.status_page_incident_linked',
    after: { statusIncidentId: event.statusIncidentId, rule: 'service', matched },
  })
  return match.incidentId
}

export async function startCorrelatingStatusIncidents(database: Database, jobs: JobQueue): Promise<void> {
  await subscribe(jobs, 'statuspage.incident_opened', STATUS_INCIDENT_OPENED_QUEUE, { retryLimit: 5, retryDelay: 2, retryBackoff: true })
  await workEach<StatusPageIncidentOpened>(
    jobs,
    STATUS_INCIDENT_OPENED_QUEUE,
    { batchSize: 10, pollingIntervalSeconds: 1 },
    async (job) => {
      await database.db.transaction().execute((trx) => correlateStatusIncident(trx, job.data))
    },
  )
}
