// What other surfaces and the platform read of status pages (ARCHITECTURE.md, "Between surfaces").
import type { Executor, Page } from '@svc/db'
import { sql } from 'kysely'
import { containing, paged } from '@svc/db'
import type { WebhookTarget } from '@svc/notifier'
import type { ComponentStatus } from './model.js'
import { publicUrlOfRow } from './pages/public-url.js'
import { uptimeBetween, PARTIAL_OUTAGE_WEIGHT } from './public/uptime.js'
import { componentHistory } from './queries/public.js'
import { webhookTargetOf } from './queries/subscribers.js'
import { templatesForComponents } from './queries/templates.js'
import { templateText } from './templates/apply.js'
import { SUBSCRIBER_RECIPIENT } from './subscribers/notifications.js'

/** The organization's status pages, for the platform's `GET /organizations/:orgId/status-pages`. */
export async function statusPagesOf(db: Executor, organizationId: string, page: Page, productUrl: string) {
  const { rows, total } = await paged(
    db.selectFrom('divinux.statusPages').where('organizationId', '=', organizationId),
    (query) =>
      query
        .select(['id', 'name', 'slug', 'customDomain', 'customDomainVerifiedAt', 'published', 'createdAt', 'updatedAt'])
        .orderBy('createdAt')
        .orderBy('id'),
    page,
  )
  return {
    rows: rows.map(({ customDomainVerifiedAt, ...row }) => ({
      ...row,
      publicUrl: publicUrlOfRow(productUrl, { ...row, customDomainVerifiedAt }),
    })),
    total,
  }
}

const summaryColumns = ['id', 'name', 'status', 'impact', 'pageId', 'startedAt', 'resolvedAt'] as const

/** Status page incidents by id (incident references with `sourceProduct: statuspages`), for RCA links. */
export async function statusIncidentSummaries(db: Executor, organizationId: string, incidentIds: string[]) {
  if (incidentIds.length === 0) return new Map<string, never>()
  const rows = await db
    .selectFrom('divinux.statusIncidents')
    .select(summaryColumns)
    .where('organizationId', '=', organizationId)
    .where('kind', '=', 'incident')
    .where('id', 'in', incidentIds)
    .execute()
  return new Map(rows.map((row) => [row.id, row]))
}

/** Status page incidents matching every word of `q` in their name or updates, in a time range, newest first. */
export async function searchStatusIncidents(
  db: Executor,
  organizationId: string,
  search: { q?: string; from?: string; to?: string },
  page: Page,
) {
  let query = db.selectFrom('divinux.statusIncidents as i').where('i.organizationId', '=', organizationId).where('i.kind', '=', 'incident')
  for (const word of (search.q ?? '').split(/\s+/).filter(Boolean)) {
    const pattern = containing(word)
    query = query.where((eb) =>
      eb.or([
        eb('i.name', 'ilike', pattern),
        eb.exists(
          eb
            .selectFrom('divinux.statusIncidentUpdates as u')
            .select('u.id')
            .whereRef('u.incidentId', '=', 'i.id')
            .where('u.body', 'ilike', pattern),
        ),
      ]),
    )
  }
  if (search.from) query = query.where('i.startedAt', '>=', new Date(search.from))
  if (search.to) query = query.where('i.startedAt', '<', new Date(search.to))
  return paged(
    query,
    (rows) =>
      rows
        .select(['i.id', 'i.name', 'i.status', 'i.impact', 'i.startedAt', 'i.resolvedAt'])
        .orderBy('i.startedAt', 'desc')
        .orderBy('i.id', 'desc'),
    page,
  )
}

/** The notifier's webhook targets for status page subscribers (`status-subscriber:<id>`). */
export function subscriberWebhookTargets(db: Executor) {
  return async (recipient: string): Promise<WebhookTarget | undefined> => {
    if (!recipient.startsWith(SUBSCRIBER_RECIPIENT)) return undefined
    const row = await webhookTargetOf(db, recipient.slice(SUBSCRIBER_RECIPIENT.length))
    if (!row?.url) return undefined
    // A webhook's events are signed; a Slack or Teams channel's URL is its own credential.
    if (row.kind === 'webhook') return row.secret ? { url: row.url, secret: row.secret } : undefined
    return { url: row.url, secret: null }
  }
}

/** A status page incident as an incident reference's context (insights' analyses and RCA drafts). */
export async function statusIncident(db: Executor, organizationId: string, incidentId: string) {
  const incident = await db
    .selectFrom('divinux.statusIncidents as i')
    .innerJoin('divinux.statusPages as p', 'p.id', 'i.pageId')
    .select(['i.id', 'i.name', 'i.status', 'i.impact', 'i.startedAt', 'i.resolvedAt', 'p.name as pageName'])
    .where('i.organizationId', '=', organizationId)
    .where('i.kind', '=', 'incident')
    .where('i.id', '=', incidentId)
    .executeTakeFirst()
  if (!incident) return undefined
  const [first, components] = await Promise.all([
    db
      .selectFrom('divinux.statusIncidentUpdates')
      .select(['body'])
      .where('incidentId', '=', incidentId)
      .orderBy('createdAt')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('divinux.statusIncidentComponents as c')
      .innerJoin('divinux.statusComponents as s', 's.id', 'c.componentId')
      .select(['s.name', 's.alertServices', 'c.status'])
      .where('c.incidentId', '=', incidentId)
      .execute(),
  ])
  return {
    ...incident,
    description: first?.body ?? null,
    components: components.map((component) => ({ name: component.name, status: component.status })),
    /** The first alert service linked to an affected component: the service deploys are looked up for. */
    service: components.flatMap((component) => component.alertServices)[0] ?? null,
    updates: Number(
      (
        await db
          .selectFrom('divinux.statusIncidentUpdates')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('incidentId', '=', incidentId)
          .executeTakeFirstOrThrow()
      ).n,
    ),
  }
}

/** A status page incident's updates, oldest first, as its timeline. */
export async function statusIncidentTimeline(db: Executor, organizationId: string, incidentId: string, limit: number) {
  return db
    .selectFrom('divinux.statusIncidentUpdates as u')
    .innerJoin('divinux.statusIncidents as i', 'i.id', 'u.incidentId')
    .select(['u.status', 'u.body', 'u.displayAt'])
    .where('i.organizationId', '=', organizationId)
    .where('u.incidentId', '=', incidentId)
    .orderBy('u.displayAt')
    .orderBy('u.createdAt')
    .limit(limit)
    .execute()
}

/** The ids among `componentIds` that are not components of the organization's pages (synthetics links). */
export async function unknownStatusComponents(db: Executor, organizationId: string, componentIds: string[]): Promise<string[]> {
  if (componentIds.length === 0) return []
  const found = await db
    .selectFrom('divinux.statusComponents')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('id', 'in', componentIds)
    .execute()
  const known = new Set(found.map((row) => row.id))
  return componentIds.filter((id) => !known.has(id))
}

/**
 * The maintenance windows touching [from, to) of any of the components: from when each started
 * (or was scheduled to) until it completed (or was scheduled to end); cancelled ones are left out.
 * Synthetics leaves them out of a check's SLA.
 */
export async function maintenanceWindowsOf(db: Executor, organizationId: string, componentIds: string[], from: Date, to: Date) {
  if (componentIds.length === 0) return []
  const rows = await db
    .selectFrom('divinux.statusIncidents as maintenance')
    .select([
      'maintenance.scheduledFor',
      'maintenance.scheduledUntil',
      'maintenance.startedAt',
      'maintenance.resolvedAt',
      'maintenance.status',
    ])
    .where('maintenance.organizationId', '=', organizationId)
    .where('maintenance.kind', '=', 'maintenance')
    .where('maintenance.status', '!=', 'cancelled')
    .where((where) =>
      where.exists(
        where
          .selectFrom('divinux.statusIncidentComponents as affected')
          .select('affected.componentId')
          .whereRef('affected.incidentId', '=', 'maintenance.id')
          .where('affected.componentId', 'in', componentIds),
      ),
    )
    .execute()
  return rows
    .map((row) => {
      const started =
        row.status === 'scheduled'
          ? row.scheduledFor!
          : row.scheduledFor && row.scheduledFor < row.startedAt
            ? row.scheduledFor
            : row.startedAt
      const ended = row.resolvedAt ?? row.scheduledUntil!
      return { from: started, to: ended }
    })
    .filter((window) => window.from < to && window.to > from)
}

/**
 * Every component's uptime over [from, to), for the platform's uptime report: the status page
 * arithmetic (maintenance left out, a partial outage weighted PARTIAL_OUTAGE_WEIGHT) by UTC day.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function componentUptimeBetween(db: Executor, organizationId: string, from: Date, to: Date) {
  const [components, history] = await Promise.all([
    db
      .selectFrom('divinux.statusComponents as component')
      .innerJoin('divinux.statusPages as page', 'page.id', 'component.pageId')
      .select(['component.id', 'component.name', 'page.name as pageName', 'component.createdAt'])
      .where('component.organizationId', '=', organizationId)
      .where('component.createdAt', '<', to)
      .orderBy('page.name')
      .orderBy('component.position')
      .orderBy('component.id')
      .execute(),
    componentHistory(db, { organizationId }, from, to),
  ])
  return {
    partialOutageWeight: PARTIAL_OUTAGE_WEIGHT,
    components: components.map((component) => {
      const changes = history
        .filter((change) => change.componentId === component.id)
        .map((change) => ({ status: change.status as ComponentStatus, changedAt: change.changedAt }))
      const uptime = uptimeBetween(changes, from, to)
      const sum = (field: 'majorOutageSeconds' | 'partialOutageSeconds' | 'maintenanceSeconds') =>
        uptime.days.reduce((total, day) => total + day[field], 0)
      return {
        id: component.id,
        name: component.name,
        pageName: component.pageName,
        uptimePercentage: uptime.uptimePercentage,
        majorOutageSeconds: sum('majorOutageSeconds'),
        partialOutageSeconds: sum('partialOutageSeconds'),
        maintenanceSeconds: sum('maintenanceSeconds'),
        days: uptime.days,
      }
    }),
  }
}

/**
 * The status page incidents that tell the public about an incident of alerting: opened for it
 * (its published status updates), following one of its alerts (a workflow's update_status_page),
 * or given by id (linked to it by correlation); newest first, at most 50.
 */
export async function statusIncidentsAbout(
  db: Executor,
  organizationId: string,
  about: { incidentId: string; alertIds: string[]; statusIncidentIds: string[] },
) {
  const rows = await db
    .selectFrom('divinux.statusIncidents as i')
    .innerJoin('divinux.statusPages as p', 'p.id', 'i.pageId')
    .select([
      'i.id',
      'i.pageId',
      'p.name as pageName',
      'i.name',
      'i.status',
      'i.impact',
      'i.published',
      'i.alertId',
      'i.alertingIncidentId',
      'i.startedAt',
      'i.resolvedAt',
    ])
    .where('i.organizationId', '=', organizationId)
    .where('i.kind', '=', 'incident')
    .where((eb) =>
      eb.or([
        eb('i.alertingIncidentId', '=', about.incidentId),
        ...(about.alertIds.length > 0 ? [eb('i.alertId', 'in', about.alertIds)] : []),
        ...(about.statusIncidentIds.length > 0 ? [eb('i.id', 'in', about.statusIncidentIds)] : []),
      ]),
    )
    .orderBy('i.startedAt', 'desc')
    .limit(50)
    .execute()
  return rows.map(({ alertId, alertingIncidentId, ...row }) => ({
    ...row,
    via:
      alertingIncidentId === about.incidentId
        ? ('incident' as const)
        : alertId && about.alertIds.includes(alertId)
          ? ('alert' as const)
          : ('correlation' as const),
  }))
}

/**
 * The components that follow these services' alerts, with their status changes in [from, to]
 * (oldest first): what the public saw while an incident unfolded (the investigator's tool).
 */
export async function componentHistoryAround(db: Executor, organizationId: string, services: string[], from: Date, to: Date) {
  if (services.length === 0) return []
  const components = await db
    .selectFrom('divinux.statusComponents')
    .select(['id', 'name', 'status', 'alertServices'])
    .where('organizationId', '=', organizationId)
    .where('alertServices', '&&', sql<string[]>`${services}::text[]`)
    .orderBy('name')
    .limit(50)
    .execute()
  if (components.length === 0) return []
  const changes = await db
    .selectFrom('divinux.statusComponentChanges')
    .select(['componentId', 'status', 'changedAt'])
    .where(
      'componentId',
      'in',
      components.map((component) => component.id),
    )
    .where('changedAt', '>=', from)
    .where('changedAt', '<=', to)
    .orderBy('changedAt')
    .orderBy('id')
    .limit(500)
    .execute()
  return components.map((component) => ({
    ...component,
    changes: changes.filter((change) => change.componentId === component.id).map(({ status, changedAt }) => ({ status, changedAt })),
  }))
}

/** The components that follow any of these services (any letter case), with their page: what a catalog service shows. */
export async function componentsOfServices(db: Executor, organizationId: string, services: string[]) {
  if (services.length === 0) return []
  const lowered = [...new Set(services.map((service) => service.toLowerCase()))]
  return db
    .selectFrom('divinux.statusComponents as c')
    .innerJoin('divinux.statusPages as p', 'p.id', 'c.pageId')
    .select(['c.id', 'c.name', 'p.id as pageId', 'p.slug as pageSlug'])
    .where('c.organizationId', '=', organizationId)
    .where(sql<boolean>`exists (select 1 from unnest(c.alert_services) followed where lower(followed) = any(${lowered}::text[]))`)
    .orderBy('p.slug')
    .orderBy('c.position')
    .limit(100)
    .execute()
}

/**
 * The incident templates of the organization's pages that give one of these components a status,
 * each in its page's default language (decision 0015, "Incident templates"): what the comms
 * agent drafts an opening update from.
 */
export async function incidentTemplatesFor(db: Executor, organizationId: string, componentIds: string[]) {
  const templates = await templatesForComponents(db, organizationId, componentIds)
  return templates.map((template) => {
    const text = templateText(template, template.locales)
    return {
      key: template.key,
      title: text.title,
      body: text.body,
      componentIds: template.components.map((component) => component.componentId),
    }
  })
}
