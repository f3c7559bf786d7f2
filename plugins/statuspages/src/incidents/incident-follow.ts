import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { subscribe, type StatusPageIncidentUpdateRequested } from '@svc/events'
import { workEach, type JobQueue } from '@svc/jobs'
import type { ComponentStatus, IncidentImpact } from '../model.js'
import { componentsFollowingServices } from '../queries/components.js'
import { incidentById } from '../queries/incidents.js'
import { templateByKey } from '../queries/templates.js'
import { templateStatuses, templateText } from '../templates/apply.js'
import type { SubscriberNotifications } from '../subscribers/notifications.js'
import { publicIncidentName } from './public-words.js'
import { openRecord, recordUpdate } from './records.js'

export const INCIDENT_FOLLOW_QUEUE = 'statuspages.incident-follow'

type Priority = NonNullable<StatusPageIncidentUpdateRequested['priority']>
const impactOf: Record<Priority, IncidentImpact> = { P1: 'critical', P2: 'major', P3: 'minor', P4: 'none' }
const componentStatusOf: Record<Priority, ComponentStatus> = {
  P1: 'major_outage',
  P2: 'partial_outage',
  P3: 'degraded_performance',
  P4: 'degraded_performance',
}
/** Events from before severities were the organization's carry SEV1–SEV4 only. */
const PRIORITY_OF_DEFAULT_SEVERITY: Record<string, Priority> = { SEV1: 'P1', SEV2: 'P2', SEV3: 'P3', SEV4: 'P4' }
const priorityOf = (event: StatusPageIncidentUpdateRequested): Priority =>
  event.priority ?? (Object.hasOwn(PRIORITY_OF_DEFAULT_SEVERITY, event.severity) ? PRIORITY_OF_DEFAULT_SEVERITY[event.severity]! : 'P3')

/** The status page incidents to update: the ones opened for the incident, and those linked to it, still open. */
async function openIncidentsOf(db: Executor, event: StatusPageIncidentUpdateRequested) {
  return db
    .selectFrom('divinux.statusIncidents')
    .select(['id', 'pageId'])
    .where('organizationId', '=', event.organizationId)
    .where('kind', '=', 'incident')
    .where('resolvedAt', 'is', null)
    .where((eb) =>
      eb.or([
        eb('alertingIncidentId', '=', event.incidentId),
        ...(event.statusIncidentIds.length > 0 ? [eb('id', 'in', event.statusIncidentIds)] : []),
      ]),
    )
    .execute()
}

/**
 * What an update says when its author gave no words and the page has no template by the name
 * they gave: Statuspage's own default words for each status.
 */
export const DEFAULT_WORDS: Record<StatusPageIncidentUpdateRequested['status'], string> = {
  investigating: 'We are currently investigating this issue.',
  identified: 'The issue has been identified and a fix is being implemented.',
  monitoring: 'A fix has been implemented and we are monitoring the results.',
  resolved: 'This incident has been resolved.',
}

/** The page's template the event names, with the words it gives there (the page's default language). */
async function templateOn(db: Executor, pageId: string, event: StatusPageIncidentUpdateRequested) {
  if (!event.template) return undefined
  const template = await templateByKey(db, pageId, event.template)
  if (!template) return undefined
  const page = await db
    .selectFrom('divinux.statusPages')
    .select(['id', 'organizationId', 'locales'])
    .where('id', '=', pageId)
    .executeTakeFirstOrThrow()
  return { template, page, text: templateText(template, page.locales) }
}

/** Whether the incident's newest update already says this (the event was delivered before). */
async function alreadySaid(db: Executor, statusIncidentId: string, status: string, body: string) {
  const latest = await db
    .selectFrom('divinux.statusIncidentUpdates')
    .select(['status', 'body'])
    .where('incidentId', '=', statusIncidentId)
    .orderBy('createdAt', 'desc')
    .limit(1)
    .executeTakeFirst()
  return latest?.status === status && latest.body === body
}

/**
 * The status pages' side of an incident's published status update (an event from alerting, which
 * never writes these tables): each status page incident opened for it, or linked to it, gets the
 * update; each page with components following its services and no open one gets one opened (a
 * draft unless the update says publish). Answers the pages changed.
 */
export async function followIncident(db: Executor, notifications: SubscriberNotifications, event: StatusPageIncidentUpdateRequested) {
  const changed = new Set<string>()
  const open = await openIncidentsOf(db, event)
  const common = { createdBy: event.authorId, notify: true }
  for (const known of open) {
    const incident = await incidentById(db, known.id, true)
    if (!incident) continue
    const templated = await templateOn(db, incident.pageId, event)
    const body = event.body || templated?.text.body || DEFAULT_WORDS[event.status]
    if (await alreadySaid(db, incident.id, event.status, body)) continue
    const statuses = templated ? await templateStatuses(db, templated.page, templated.template) : new Map<string, ComponentStatus>()
    await recordUpdate(db, notifications, incident, { ...common, status: event.status, body, statuses })
    changed.add(incident.pageId)
  }
  if (event.status === 'resolved') return [...changed]
  const components = await componentsFollowingServices(db, event.organizationId, event.services)
  const covered = new Set(open.map((known) => known.pageId))
  for (const pageId of new Set(components.map((component) => component.pageId))) {
    if (covered.has(pageId)) continue
    const onPage = components.filter((component) => component.pageId === pageId)
    const status = componentStatusOf[priorityOf(event)]
    const templated = await templateOn(db, pageId, event)
    // The template's statuses win over the severity's for the components it names.
    const statuses = new Map([
      ...onPage.map((component) => [component.id, status] as const),
      ...(templated ? await templateStatuses(db, templated.page, templated.template) : []),
    ])
    // The caller's public name, else the template's, else one from this page's components: never the internal title.
    const name =
      event.name ??
      templated?.text.title ??
      publicIncidentName(
        status,
        onPage.map((component) => component.name),
      )
    await openRecord(
      db,
      notifications,
      {
        organizationId: event.organizationId,
        pageId,
        kind: 'incident',
        name: name.slice(0, 200),
        status: event.status,
        impact: templated?.template.impact ?? impactOf[priorityOf(event)],
        published: event.publish,
        alertingIncidentId: event.incidentId,
        createdBy: event.authorId,
      },
      { ...common, status: event.status, body: event.body || templated?.text.body || DEFAULT_WORDS[event.status], statuses },
    )
    changed.add(pageId)
  }
  return [...changed]
}

export async function startFollowingIncidents(deps: {
  database: Database
  jobs: JobQueue
  notifications: SubscriberNotifications
  changed: (pageId: string) => void
  log: FastifyBaseLogger
}): Promise<void> {
  await subscribe(deps.jobs, 'statuspage.incident_update_requested', INCIDENT_FOLLOW_QUEUE, {
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
  })
  await workEach<StatusPageIncidentUpdateRequested>(
    deps.jobs,
    INCIDENT_FOLLOW_QUEUE,
    { batchSize: 5, pollingIntervalSeconds: 1 },
    async (job) => {
      const changed = await deps.database.db.transaction().execute((trx) => followIncident(trx, deps.notifications, job.data))
      for (const pageId of changed) deps.changed(pageId)
      if (changed.length > 0) deps.log.info({ incidentId: job.data.incidentId, pages: changed.length }, 'status pages follow the incident')
    },
  )
}

/** The alert services an incident's components follow, for `statuspage.incident_opened`. */
export async function servicesOfComponents(db: Executor, componentIds: string[]): Promise<string[]> {
  if (componentIds.length === 0) return []
  const rows = await db.selectFrom('divinux.statusComponents').select('alertServices').where('id', 'in', componentIds).execute()
  return [...new Set(rows.flatMap((row) => row.alertServices))]
}
