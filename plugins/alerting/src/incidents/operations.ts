import { trackProductEvent } from '@svc/analytics'
import { recordAudit, type AuditContext } from '@svc/audit'
import type { Executor } from '@svc/db'
import type { JobQueue } from '@svc/jobs'
import { ConflictError } from '@svc/http'
import { incidentAuditOf, incidentOrNotFound, timelineEntry } from './common.js'
import { milestonesAfter, refusedTransition, type IncidentStatus, type Severity } from './model.js'
import { resolveOnStatusPages } from './status-pages.js'
import type { FieldValues } from './shaping/schemas.js'
import { checkFieldValues, fieldValue, requireFields, shapeOf, type Shape } from './shaping/values.js'
import { requireSeverity } from './shaping/severities.js'
import {
  addResponder,
  addTimeline,
  assignRole,
  insertIncident,
  linkAlerts,
  settleIncidentAlerts,
  snoozeIncidentAlerts,
  updateIncident,
  type IncidentRow,
  type NewTimelineRow,
} from './queries.js'

// The changes people make to an incident, whether from the API or from chat: each writes its
// timeline entries and its audit entry in the caller's transaction. Callers check their input
// (members, alerts) first; what these refuse is what the incident's state refuses.

/** Who acts: a person, and where their change came from for the audit log. */
export interface Actor {
  userId: string
  audit: AuditContext
}

/** The system acting on its own (a workflow): timeline entries without an author, audited as the system. */
export interface SystemActor {
  userId: null
  audit: AuditContext
}

export interface Declaration {
  title: string
  summary: string | null
  severity: Severity
  startedAt: Date
  detectedAt: Date
  commanderId: string
  alertIds: string[]
  /** The key of its incident type (none: no type). */
  type?: string | null
  fields?: FieldValues
}

/** Values that are set: a null given at declaration or in a change clears, and is not kept. */
const setValues = (values: FieldValues) => Object.fromEntries(Object.entries(values).filter(([, value]) => value !== null))

/**
 * Declares an incident in triage with its commander and alerts; answers its id. Its type and
 * custom field values are checked (400 naming the field), those its type requires at declaration
 * included.
 */
export async function declareIncident(trx: Executor, actor: Actor, organizationId: string, declared: Declaration): Promise<string> {
  const { title, summary, commanderId, alertIds } = declared
  // The organization's own spelling of the key (Slack's sev2 is SEV2).
  const severity = (await requireSeverity(trx, organizationId, declared.severity, 'severity')).key
  const shape = await shapeOf(trx, organizationId, declared.type ?? null)
  const fields = setValues(await checkFieldValues(trx, organizationId, shape, declared.fields ?? {}))
  requireFields(shape, fields, 'declare')
  const incidentId = await insertIncident(trx, {
    organizationId,
    title: title.trim(),
    summary,
    severity,
    openedBy: 'person',
    declaredBy: actor.userId,
    startedAt: declared.startedAt,
    detectedAt: declared.detectedAt,
    typeId: shape.type?.id ?? null,
    fields,
  })
  await assignRole(trx, organizationId, incidentId, 'commander', commanderId, actor.userId)
  const linked = await linkAlerts(
    trx,
    organizationId,
    incidentId,
    alertIds.map((alertId) => ({ alertId, rule: 'declared', score: 1, matched: {}, linkedBy: actor.userId })),
  )
  const entry = (kind: string, data: Record<string, unknown>) => timelineEntry(organizationId, incidentId, actor.userId, kind, data)
  await addTimeline(trx, [
    entry('declared', { title, severity, type: shape.type?.key ?? null, fields }),
    entry('role_assigned', { role: 'commander', userId: commanderId }),
    ...linked.map((alertId) => entry('alert_linked', { alertId, rule: 'declared' })),
  ])
  const { context, entry: auditEntry } = incidentAuditOf(actor.audit, organizationId, incidentId)
  await recordAudit(trx, context, {
    ...auditEntry,
    action: 'incident.declared',
    after: { title, summary, severity, commanderId, alertIds: linked, type: shape.type?.key ?? null, fields },
  })
  await trackProductEvent(trx, {
    organizationId,
    name: 'Incident Declared',
    userId: actor.userId,
    properties: { incidentId, severity, alerts: linked.length, type: shape.type?.key ?? null },
  })
  return incidentId
}

export interface IncidentEdit {
  title?: string
  summary?: string | null
  severity?: Severity
  status?: IncidentStatus
  /** Another type's key, or null for none. */
  type?: string | null
  /** Values to set (null clears one); the others stay. */
  fields?: FieldValues
  /** With `status: resolved`: whether its status page incidents resolve with it (the default). */
  statusPages?: boolean
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

/**
 * The type and field values an edit leaves the incident with, checked against its (new) type, and
 * the timeline entries of what changed. Resolving needs what the type requires by then.
 */
async function shapeAfter(trx: Executor, organizationId: string, before: IncidentRow, edit: IncidentEdit, resolving: boolean) {
  const typeKey = edit.type === undefined ? before.typeKey : edit.type
  const shape: Shape = await shapeOf(trx, organizationId, typeKey)
  const current = before.fields as Record<string, unknown>
  const given = edit.fields ? await checkFieldValues(trx, organizationId, shape, edit.fields) : {}
  const fields = setValues({ ...(current as FieldValues), ...given })
  if (resolving) requireFields(shape, fields, 'resolve')
  const changes: Array<{ kind: string; data: Record<string, unknown> }> = []
  if (typeKey !== before.typeKey) changes.push({ kind: 'type_changed', data: { from: before.typeKey, to: typeKey } })
  for (const key of Object.keys(given)) {
    const [from, to] = [fieldValue(current, key), fieldValue(fields, key)]
    if (!same(from, to)) changes.push({ kind: 'field_changed', data: { field: key, from: from ?? null, to: to ?? null } })
  }
  return { shape, fields, changes }
}

/**
 * Changes title, summary, severity or status (409 for a move the state machine refuses); the
 * incident works its alerts: leaving triage acknowledges them and stops their paging, resolving
 * resolves them. Answers the incident as it is after (unchanged when nothing changed).
 */
export async function editIncident(
  trx: Executor,
  jobs: JobQueue,
  actor: Actor | SystemActor,
  organizationId: string,
  incidentId: string,
  edit: IncidentEdit,
): Promise<IncidentRow> {
  const before = await incidentOrNotFound(trx, organizationId, incidentId, true)
  const { status, title, summary } = edit
  const severity =
    edit.severity === undefined || edit.severity === before.severity
      ? edit.severity
      : (await requireSeverity(trx, organizationId, edit.severity, 'severity')).key
  const shaped = await shapeAfter(trx, organizationId, before, edit, status === 'resolved' && before.status !== 'resolved')
  const change = {
    ...(title !== undefined ? { title: title.trim() } : {}),
    ...(summary !== undefined ? { summary } : {}),
    ...(severity !== undefined ? { severity } : {}),
    ...(shaped.changes.length > 0 ? { typeId: shaped.shape.type?.id ?? null, fields: shaped.fields } : {}),
  }
  const timeline: NewTimelineRow[] = []
  const entry = (kind: string, data: Record<string, unknown>) => timelineEntry(organizationId, before.id, actor.userId, kind, data)
  let milestones = {}
  if (status !== undefined && status !== before.status) {
    const refused = refusedTransition(before.status as IncidentStatus, status)
    if (refused) throw new ConflictError(refused)
    milestones = { status, ...milestonesAfter(before, status, new Date()) }
    timeline.push(entry('status_changed', { from: before.status, to: status }))
  }
  if (severity !== undefined && severity !== before.severity)
    timeline.push(entry('severity_changed', { from: before.severity, to: severity }))
  if ((title !== undefined && change.title !== before.title) || (summary !== undefined && summary !== before.summary))
    timeline.push(
      entry('updated', { ...(title !== undefined ? { title: change.title } : {}), ...(summary !== undefined ? { summary } : {}) }),
    )
  for (const shapeChange of shaped.changes) timeline.push(entry(shapeChange.kind, shapeChange.data))
  if (timeline.length === 0) return before
  // A resolved incident has nothing to page again for.
  const unsnoozed = status === 'resolved' && before.snoozedUntil ? { snoozedUntil: null } : {}
  await updateIncident(trx, organizationId, before.id, { ...change, ...milestones, ...unsnoozed })
  const settled = status === 'resolved' ? 'resolved' : status && status !== 'triage' ? 'acknowledged' : undefined
  if (settled && status !== before.status) {
    const alertIds = await settleIncidentAlerts(trx, organizationId, before.id, settled, actor.userId)
    if (alertIds.length > 0) timeline.push(entry(settled === 'resolved' ? 'alerts_resolved' : 'alerts_acknowledged', { alertIds }))
  }
  const written = await addTimeline(trx, timeline)
  const after = await incidentOrNotFound(trx, organizationId, before.id)
  const resolution = written.find((row) => row.kind === 'status_changed')
  if (status === 'resolved' && resolution && edit.statusPages !== false)
    await resolveOnStatusPages(jobs, trx, { ...after, organizationId }, resolution.id, actor.userId)
  const { context, entry: auditEntry } = incidentAuditOf(actor.audit, organizationId, before.id)
  const fields = (row: IncidentRow) => ({
    title: row.title,
    summary: row.summary,
    severity: row.severity,
    status: row.status,
    type: row.typeKey,
    fields: row.fields,
  })
  await recordAudit(trx, context, { ...auditEntry, action: 'incident.updated', before: fields(before), after: fields(after) })
  return after
}

/** A note or a status update by a person, on the timeline; answers the entry. */
export async function addTimelineText(
  trx: Executor,
  actor: Actor,
  organizationId: string,
  incidentId: string,
  kind: 'note' | 'status_update',
  body: string,
) {
  const incident = await incidentOrNotFound(trx, organizationId, incidentId, true)
  const [row] = await addTimeline(trx, [{ organizationId, incidentId: incident.id, kind, body, data: {}, authorId: actor.userId }])
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
  await recordAudit(trx, context, {
    ...entry,
    action: kind === 'note' ? 'incident.note_added' : 'incident.status_update_added',
    after: { body },
  })
  return row!
}

/**
 * Snoozes an acknowledged incident until `until`: its acknowledged alerts page again then (from
 * their policy's first step) and it goes back to triage, as PagerDuty's snooze does. 409 for an
 * incident in triage or resolved, or one none of whose alerts would page again.
 */
export async function snoozeIncident(trx: Executor, actor: Actor, organizationId: string, incidentId: string, until: Date) {
  const incident = await incidentOrNotFound(trx, organizationId, incidentId, true)
  const reference = `INC-${incident.number}`
  if (incident.status === 'triage') throw new ConflictError(`${reference} is in triage: acknowledge it before snoozing it`)
  if (incident.status === 'resolved') throw new ConflictError(`${reference} is resolved: there is nothing to snooze`)
  const alerts = await snoozeIncidentAlerts(trx, organizationId, incident.id, until)
  if (alerts === 0) throw new ConflictError(`none of the alerts of ${reference} pages anyone: snoozing it would re-page no one`)
  await updateIncident(trx, organizationId, incident.id, { snoozedUntil: until })
  await addTimeline(trx, [timelineEntry(organizationId, incident.id, actor.userId, 'snoozed', { until: until.toISOString(), alerts })])
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
  await recordAudit(trx, context, {
    ...entry,
    action: 'incident.snoozed',
    before: { snoozedUntil: incident.snoozedUntil?.toISOString() ?? null },
    after: { snoozedUntil: until.toISOString() },
  })
}

/** Gives a role of the incident to a person (replacing whoever held it); a change is on the timeline and audited. */
export async function assignIncidentRole(
  trx: Executor,
  actor: Actor,
  organizationId: string,
  incidentId: string,
  role: string,
  userId: string,
) {
  const previous = await assignRole(trx, organizationId, incidentId, role, userId, actor.userId)
  if (previous === userId) return
  await addTimeline(trx, [
    timelineEntry(organizationId, incidentId, actor.userId, 'role_assigned', { role, userId, previousUserId: previous ?? null }),
  ])
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incidentId)
  await recordAudit(trx, context, {
    ...entry,
    action: 'incident.role_assigned',
    before: previous ? { role, userId: previous } : null,
    after: { role, userId },
  })
}

/** The actor joins the incident's responders (once; answers false when they were one). */
export async function joinIncident(trx: Executor, actor: Actor, organizationId: string, incidentId: string, via: 'api' | 'chat') {
  const incident = await incidentOrNotFound(trx, organizationId, incidentId, true)
  const joined = await addResponder(trx, { organizationId, incidentId: incident.id, userId: actor.userId, via, addedBy: actor.userId })
  if (!joined) return false
  await addTimeline(trx, [timelineEntry(organizationId, incident.id, actor.userId, 'responder_joined', { userId: actor.userId, via })])
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
  await recordAudit(trx, context, { ...entry, action: 'incident.responder_joined', after: { userId: actor.userId, via } })
  return true
}
