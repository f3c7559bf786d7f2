import { sql } from 'kysely'
import { containing, type Executor, type Page, paged } from '@svc/db'
import { alertSummaries, incidentSummaries } from '@svc/plugin-alerting'
import { statusIncidentSummaries } from '@svc/plugin-statuspages'

const rcaColumns = [
  'id',
  'organizationId',
  'title',
  'status',
  'summary',
  'rootCause',
  'impact',
  'timeline',
  'createdBy',
  'editedFields',
  'aiDraftedAt',
  'publishedAt',
  'createdAt',
  'updatedAt',
  'draftStatus',
  'draftError',
  'draftRequestedAt',
  'suspectedDeployId',
] as const

export type RcaRow = NonNullable<Awaited<ReturnType<typeof findRca>>>
/** The narrative sections, written by people or drafted by the AI; `edited_fields` holds these names. */
export const narrativeFields = ['summary', 'rootCause', 'impact', 'timeline'] as const
export type NarrativeField = (typeof narrativeFields)[number]

export async function findRca(db: Executor, organizationId: string, rcaId: string) {
  return db
    .selectFrom('divinux.rcas')
    .select(rcaColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', rcaId)
    .executeTakeFirst()
}

/** The document, locked until the caller's transaction ends: status checks and changes take turns. */
export async function lockRca(db: Executor, organizationId: string, rcaId: string) {
  return db
    .selectFrom('divinux.rcas')
    .select(rcaColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', rcaId)
    .forUpdate()
    .executeTakeFirst()
}

export interface RcaFilter {
  status?: string
  q?: string
}

export async function listRcas(db: Executor, organizationId: string, filter: RcaFilter, page: Page) {
  let query = db.selectFrom('divinux.rcas').where('organizationId', '=', organizationId)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.q) query = query.where('title', 'ilike', containing(filter.q))
  return paged(query, (rows) => rows.select(rcaColumns).orderBy('createdAt', 'desc').orderBy('id', 'desc'), page)
}

export interface RcaContent {
  title?: string
  summary?: string | null
  rootCause?: string | null
  impact?: string | null
  timeline?: string | null
}

export async function insertRca(
  db: Executor,
  organizationId: string,
  content: RcaContent & { title: string },
  editedFields: NarrativeField[],
  createdBy: string | null,
) {
  return db
    .insertInto('divinux.rcas')
    .values({ organizationId, ...content, editedFields, createdBy })
    .returning(rcaColumns)
    .executeTakeFirstOrThrow()
}

/** Changes content and status; fields a person edits are remembered, so an AI draft leaves them alone. */
export async function updateRca(
  db: Executor,
  organizationId: string,
  rcaId: string,
  changes: RcaContent & { status?: string },
  edited: NarrativeField[],
) {
  return db
    .updateTable('divinux.rcas')
    .set({
      ...changes,
      ...(edited.length > 0
        ? { editedFields: sql<string[]>`array(select distinct unnest(edited_fields || ${edited}::text[]) order by 1)` }
        : {}),
      ...(changes.status === 'published' ? { publishedAt: sql<Date>`now()` } : {}),
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', rcaId)
    .returning(rcaColumns)
    .executeTakeFirstOrThrow()
}

export async function deleteRca(db: Executor, organizationId: string, rcaId: string): Promise<void> {
  await db.deleteFrom('divinux.rcas').where('organizationId', '=', organizationId).where('id', '=', rcaId).execute()
}

// Links to incidents.

const linkColumns = ['l.id', 'l.sourceProduct', 'l.incidentId', 'l.linkedBy', 'l.createdAt'] as const

/**
 * Links with what is known of their incidents, through each surface's read module: alerting's
 * incidents (INC-n) and alerts, status page incidents.
 */
export async function listLinks(db: Executor, organizationId: string, rcaId: string) {
  const links = await db
    .selectFrom('divinux.rcaIncidentLinks as l')
    .select(linkColumns)
    .where('l.organizationId', '=', organizationId)
    .where('l.rcaId', '=', rcaId)
    .orderBy('l.createdAt')
    .orderBy('l.id')
    .execute()
  const alerts = await alertSummaries(
    db,
    organizationId,
    links.filter((link) => link.sourceProduct === 'alerting').map((link) => link.incidentId),
  )
  // An alerting link that names no alert names an incident (INC-n).
  const incidents = await incidentSummaries(
    db,
    organizationId,
    links.filter((link) => link.sourceProduct === 'alerting' && !alerts.has(link.incidentId)).map((link) => link.incidentId),
  )
  const statusIncidents = await statusIncidentSummaries(
    db,
    organizationId,
    links.filter((link) => link.sourceProduct === 'statuspages').map((link) => link.incidentId),
  )
  return links.map((link) => {
    const incident = link.sourceProduct === 'alerting' ? incidents.get(link.incidentId) : undefined
    if (incident) {
      return {
        ...link,
        kind: 'incident' as const,
        reference: `INC-${incident.number}`,
        title: incident.title,
        priority: incident.severity,
        status: incident.status,
        service: incident.services[0] ?? null,
        firstSeenAt: incident.detectedAt,
        resolvedAt: incident.resolvedAt,
      }
    }
    const statusIncident = link.sourceProduct === 'statuspages' ? statusIncidents.get(link.incidentId) : undefined
    if (statusIncident) {
      return {
        ...link,
        kind: 'status_incident' as const,
        reference: statusIncident.name,
        title: statusIncident.name,
        priority: statusIncident.impact,
        status: statusIncident.status,
        service: null,
        firstSeenAt: statusIncident.startedAt,
        resolvedAt: statusIncident.resolvedAt,
      }
    }
    const alert = link.sourceProduct === 'alerting' ? alerts.get(link.incidentId) : undefined
    return {
      ...link,
      kind: 'alert' as const,
      reference: alert?.title ?? null,
      title: alert?.title ?? null,
      priority: alert?.priority ?? null,
      status: alert?.status ?? null,
      service: alert?.service ?? null,
      firstSeenAt: alert?.firstSeenAt ?? null,
      resolvedAt: alert?.resolvedAt ?? null,
    }
  })
}

export type LinkRow = Awaited<ReturnType<typeof listLinks>>[number]

/** A new link, or undefined when the incident is linked already (the unique constraint decides). */
export async function insertLink(
  db: Executor,
  organizationId: string,
  rcaId: string,
  incident: { sourceProduct: string; incidentId: string },
  linkedBy: string | null,
) {
  return db
    .insertInto('divinux.rcaIncidentLinks')
    .values({ organizationId, rcaId, ...incident, linkedBy })
    .onConflict((oc) => oc.constraint('rca_incident_links_incident_key').doNothing())
    .returning('id')
    .executeTakeFirst()
}

export async function deleteLink(db: Executor, organizationId: string, rcaId: string, linkId: string) {
  return db
    .deleteFrom('divinux.rcaIncidentLinks')
    .where('organizationId', '=', organizationId)
    .where('rcaId', '=', rcaId)
    .where('id', '=', linkId)
    .returning('id')
    .executeTakeFirst()
}

// Action items.

// The due date as text: a `date` read into a JavaScript Date would move with the process's time zone.
const itemColumns = [
  'id',
  'rcaId',
  'title',
  'description',
  'assigneeUserId',
  'status',
  'priority',
  sql<string | null>`due_date::text`.as('dueDate'),
  'createdBy',
  'completedAt',
  'createdAt',
  'updatedAt',
] as const
export type ActionItemRow = NonNullable<Awaited<ReturnType<typeof findActionItem>>>

export async function findActionItem(db: Executor, organizationId: string, rcaId: string, itemId: string) {
  return db
    .selectFrom('divinux.rcaActionItems')
    .select(itemColumns)
    .where('organizationId', '=', organizationId)
    .where('rcaId', '=', rcaId)
    .where('id', '=', itemId)
    .executeTakeFirst()
}

/** An action item by its id alone, in the organization (a ticket's change names only the item). */
export async function actionItemOfId(db: Executor, organizationId: string, itemId: string) {
  return db
    .selectFrom('divinux.rcaActionItems')
    .select(itemColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', itemId)
    .executeTakeFirst()
}

export async function listActionItems(
  db: Executor,
  organizationId: string,
  rcaId: string,
  filter: { status?: string; assigneeUserId?: string },
) {
  let query = db
    .selectFrom('divinux.rcaActionItems')
    .select(itemColumns)
    .where('organizationId', '=', organizationId)
    .where('rcaId', '=', rcaId)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.assigneeUserId) query = query.where('assigneeUserId', '=', filter.assigneeUserId)
  return query.orderBy('createdAt').orderBy('id').execute()
}

export interface ActionItemContent {
  title?: string
  description?: string | null
  assigneeUserId?: string | null
  status?: string
  priority?: string
  dueDate?: string | null
}

export async function insertActionItem(
  db: Executor,
  organizationId: string,
  rcaId: string,
  content: ActionItemContent & { title: string },
  createdBy: string,
) {
  return db
    .insertInto('divinux.rcaActionItems')
    .values({ organizationId, rcaId, ...content, createdBy, completedAt: content.status === 'done' ? sql<Date>`now()` : null })
    .returning(itemColumns)
    .executeTakeFirstOrThrow()
}

export async function updateActionItem(db: Executor, organizationId: string, rcaId: string, itemId: string, changes: ActionItemContent) {
  return db
    .updateTable('divinux.rcaActionItems')
    .set({
      ...changes,
      // Done is stamped when it becomes done, and cleared when it is reopened.
      ...(changes.status === undefined ? {} : { completedAt: changes.status === 'done' ? sql<Date>`coalesce(completed_at, now())` : null }),
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('rcaId', '=', rcaId)
    .where('id', '=', itemId)
    .returning(itemColumns)
    .executeTakeFirst()
}

export async function deleteActionItem(db: Executor, organizationId: string, rcaId: string, itemId: string) {
  return db
    .deleteFrom('divinux.rcaActionItems')
    .where('organizationId', '=', organizationId)
    .where('rcaId', '=', rcaId)
    .where('id', '=', itemId)
    .returning('id')
    .executeTakeFirst()
}

/** E-mails of the given users, for showing assignees. */
export async function emailsOf(db: Executor, userIds: string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map()
  const rows = await db.selectFrom('core.users').select(['id', 'email']).where('id', 'in', userIds).execute()
  return new Map(rows.map((row) => [row.id, row.email]))
}

/** Counts by status, the median time from an incident to its published RCA, and action items by state and assignee. */
export async function rcaStatistics(db: Executor, organizationId: string) {
  const [byStatus, publication, items, byAssignee] = await Promise.all([
    db
      .selectFrom('divinux.rcas')
      .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
      .where('organizationId', '=', organizationId)
      .groupBy('status')
      .execute(),
    secondsToPublish(db, organizationId),
    sql<{ open: number; overdue: number; done: number; total: number }>`
      select count(*) filter (where status in ('open', 'in_progress'))::int as open,
        count(*) filter (where status in ('open', 'in_progress') and due_date < current_date)::int as overdue,
        count(*) filter (where status = 'done')::int as done,
        count(*)::int as total
      from divinux.rca_action_items where organization_id = ${organizationId}`.execute(db),
    sql<{ assigneeUserId: string | null; email: string | null; open: number; overdue: number; done: number; total: number }>`
      select i.assignee_user_id, u.email,
        count(*) filter (where i.status in ('open', 'in_progress'))::int as open,
        count(*) filter (where i.status in ('open', 'in_progress') and i.due_date < current_date)::int as overdue,
        count(*) filter (where i.status = 'done')::int as done,
        count(*)::int as total
      from divinux.rca_action_items i left join core.users u on u.id = i.assignee_user_id
      where i.organization_id = ${organizationId}
      group by i.assignee_user_id, u.email
      order by count(*) filter (where i.status in ('open', 'in_progress')) desc, u.email nulls last`.execute(db),
  ])
  return {
    byStatus: byStatus.map((row) => ({ status: row.status, count: Number(row.count) })),
    medianSecondsToPublish: median(publication),
    publishedWithIncidents: publication.length,
    actionItems: items.rows[0] ?? { open: 0, overdue: 0, done: 0, total: 0 },
    byAssignee: byAssignee.rows,
  }
}

/**
 * For each published RCA with linked alerts: seconds from its earliest alert's first sighting
 * (read through alerting's read module) to its publication.
 */
async function secondsToPublish(db: Executor, organizationId: string): Promise<number[]> {
  const links = await db
    .selectFrom('divinux.rcas as r')
    .innerJoin('divinux.rcaIncidentLinks as l', (join) =>
      join.onRef('l.rcaId', '=', 'r.id').onRef('l.organizationId', '=', 'r.organizationId'),
    )
    .select(['r.id', 'r.publishedAt', 'l.incidentId'])
    .where('r.organizationId', '=', organizationId)
    .where('r.status', '=', 'published')
    .where('l.sourceProduct', '=', 'alerting')
    .execute()
  const alerts = await alertSummaries(db, organizationId, [...new Set(links.map((link) => link.incidentId))])
  const began = new Map<string, { publishedAt: Date; at: number }>()
  for (const link of links) {
    const firstSeen = alerts.get(link.incidentId)?.firstSeenAt.getTime()
    if (firstSeen === undefined || !link.publishedAt) continue
    const earlier = began.get(link.id)
    if (!earlier || firstSeen < earlier.at) began.set(link.id, { publishedAt: link.publishedAt, at: firstSeen })
  }
  return [...began.values()].map(({ publishedAt, at }) => (publishedAt.getTime() - at) / 1000)
}

/** The median (as percentile_cont(0.5) computes it), rounded to the second; null for none. */
function median(values: number[]): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = (sorted.length - 1) / 2
  const low = sorted[Math.floor(middle)] ?? 0
  const high = sorted[Math.ceil(middle)] ?? 0
  return Math.round((low + high) / 2)
}

// AI drafts.

/** Queues a draft unless one is queued or running; undefined when it is. */
export async function queueDraft(db: Executor, organizationId: string, rcaId: string, overwrite: boolean, userId: string) {
  return db
    .updateTable('divinux.rcas')
    .set({
      draftStatus: 'queued',
      draftError: null,
      draftOverwrite: overwrite,
      draftRequestedBy: userId,
      draftRequestedAt: sql<Date>`now()`,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', rcaId)
    .where((eb) => eb.or([eb('draftStatus', 'is', null), eb('draftStatus', 'in', ['completed', 'failed'])]))
    .returning(rcaColumns)
    .executeTakeFirst()
}

/** Takes a queued draft (or one whose worker died while running) for this attempt. */
export async function claimDraft(db: Executor, organizationId: string, rcaId: string) {
  return db
    .updateTable('divinux.rcas')
    .set({ draftStatus: 'running' })
    .where('organizationId', '=', organizationId)
    .where('id', '=', rcaId)
    .where('draftStatus', 'in', ['queued', 'running'])
    .returning([...rcaColumns, 'draftOverwrite'])
    .executeTakeFirst()
}

export interface DraftSections {
  summary: string
  rootCause: string
  impact: string
  timeline: string
}

/**
 * Writes the drafted sections a person has not written (all of them with `overwrite`); those
 * written are the AI's now, so they leave `edited_fields`. A document published meanwhile is
 * left as it is.
 */
export async function saveDraft(
  db: Executor,
  organizationId: string,
  rcaId: string,
  draft: { sections: DraftSections; overwrite: boolean; suspectedDeployId: string | null; promptTokens: number; completionTokens: number },
) {
  const current = await lockRca(db, organizationId, rcaId)
  if (!current || current.draftStatus !== 'running') return undefined
  if (current.status === 'published') {
    return db
      .updateTable('divinux.rcas')
      .set({ draftStatus: 'failed', draftError: 'the RCA was published before the draft was ready' })
      .where('organizationId', '=', organizationId)
      .where('id', '=', rcaId)
      .returning(rcaColumns)
      .executeTakeFirst()
  }
  const written = narrativeFields.filter((field) => draft.overwrite || !current.editedFields.includes(field))
  return db
    .updateTable('divinux.rcas')
    .set({
      ...Object.fromEntries(written.map((field) => [field, draft.sections[field]])),
      editedFields: current.editedFields.filter((field) => !(written as string[]).includes(field)),
      aiDraftedAt: sql<Date>`now()`,
      draftStatus: 'completed',
      draftError: null,
      suspectedDeployId: draft.suspectedDeployId,
      draftPromptTokens: sql<number>`draft_prompt_tokens + ${draft.promptTokens}`,
      draftCompletionTokens: sql<number>`draft_completion_tokens + ${draft.completionTokens}`,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', rcaId)
    .returning(rcaColumns)
    .executeTakeFirst()
}

/** Back to queued for the job's next attempt, or failed for good. */
export async function setbackDraft(db: Executor, organizationId: string, rcaId: string, to: 'queued' | 'failed', error: string) {
  await db
    .updateTable('divinux.rcas')
    .set({ draftStatus: to, draftError: error })
    .where('organizationId', '=', organizationId)
    .where('id', '=', rcaId)
    .where('draftStatus', '=', 'running')
    .execute()
}

/** The latest completed analysis of an incident, for an RCA draft. */
/**
 * The latest completed analysis of any of these subjects of one surface (an incident and its
 * alerts: an analysis requested for either explains the same incident), newest first.
 */
export async function latestAnalysis(db: Executor, organizationId: string, sourceProduct: string, incidentIds: string[]) {
  if (incidentIds.length === 0) return undefined
  return db
    .selectFrom('divinux.analyses')
    .select(['summary', 'rootCause', 'severity'])
    .where('organizationId', '=', organizationId)
    .where('sourceProduct', '=', sourceProduct)
    .where('incidentId', 'in', incidentIds)
    .where('status', '=', 'completed')
    .orderBy('completedAt', 'desc')
    .limit(1)
    .executeTakeFirst()
}
