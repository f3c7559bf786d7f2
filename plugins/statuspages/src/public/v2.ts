import { bannerStatusOf, overallStatus, worstStatus, type ComponentStatus, type IncidentImpact } from '../model.js'
import type { PublicComponents, PublicRecord } from '../queries/public.js'
import type { AffectedComponentRecord } from '../schemas.js'
import type { PublicPage } from './cache.js'
import { isoInZone } from './zoned-time.js'

/**
 * Statuspage API v2 shapes (https://metastatuspage.com/api/v2/), field for field, so Statuspage
 * clients and aggregators read our pages unchanged: snake_case names, groups listed as components
 * with `group: true` and their members' ids, maintenances as incidents with a window, and every
 * time in the page's time zone with its offset there, as Statuspage writes them.
 */

export function v2Page(page: PublicPage, url: string) {
  return { id: page.id, name: page.name, url, time_zone: page.timeZone, updated_at: isoInZone(page.updatedAt, page.timeZone) }
}

type V2Component = ReturnType<typeof v2Component>

function v2Component(component: PublicComponents['components'][number], timeZone: string) {
  const createdAt = isoInZone(component.createdAt, timeZone)
  return {
    id: component.id,
    name: component.name,
    status: component.status,
    created_at: createdAt,
    updated_at: isoInZone(component.updatedAt, timeZone),
    position: component.position,
    description: component.description,
    showcase: component.showUptime,
    start_date: createdAt.slice(0, 10) as string | null,
    group_id: component.groupId,
    page_id: component.pageId,
    group: false,
    only_show_if_degraded: false,
  }
}

/** Components in display order: each group (its status the worst of its members') followed by its members. */
export function v2Components({ components, groups }: PublicComponents, timeZone: string) {
  const ungrouped = components.filter((component) => !component.groupId || !groups.some((group) => group.id === component.groupId))
  const top = [
    ...groups.map((group) => ({ kind: 'group' as const, group })),
    ...ungrouped.map((component) => ({ kind: 'component' as const, component })),
  ].sort(
    (a, b) =>
      (a.kind === 'group' ? a.group.position : a.component.position) - (b.kind === 'group' ? b.group.position : b.component.position),
  )
  const listed: Array<V2Component & { components?: string[] }> = []
  for (const item of top) {
    if (item.kind === 'component') {
      listed.push(v2Component(item.component, timeZone))
      continue
    }
    const members = components.filter((component) => component.groupId === item.group.id)
    listed.push({
      id: item.group.id,
      name: item.group.name,
      status: worstStatus(members.map((member) => member.status as ComponentStatus)),
      created_at: isoInZone(item.group.createdAt, timeZone),
      updated_at: isoInZone(item.group.updatedAt, timeZone),
      position: item.group.position,
      description: item.group.description,
      showcase: false,
      start_date: null,
      group_id: null,
      page_id: item.group.pageId,
      group: true,
      only_show_if_degraded: false,
      components: members.map((member) => member.id),
    })
    listed.push(...members.map((member) => v2Component(member, timeZone)))
  }
  return listed
}

export function v2Record(record: PublicRecord, content: PublicComponents, pageUrl: string, timeZone: string) {
  const byId = new Map(content.components.map((component) => [component.id, component]))
  const iso = (date: Date) => isoInZone(date, timeZone)
  const isoOrNull = (date: Date | null) => (date ? iso(date) : null)
  const base = {
    id: record.id,
    name: record.name,
    status: record.status,
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
    monitoring_at: isoOrNull(record.monitoringAt),
    resolved_at: isoOrNull(record.resolvedAt),
    impact: record.impact,
    shortlink: `${pageUrl}#${record.kind}-${record.id}`,
    started_at: iso(record.startedAt),
    page_id: record.pageId,
    incident_updates: record.updates.map((update) => ({
      id: update.id,
      status: update.status,
      body: update.body,
      incident_id: record.id,
      created_at: iso(update.createdAt),
      updated_at: iso(update.updatedAt),
      display_at: iso(update.displayAt),
      affected_components: (update.affectedComponents as unknown as AffectedComponentRecord[]).map((change) => ({
        code: change.code,
        name: change.name,
        old_status: change.oldStatus,
        new_status: change.newStatus,
      })),
      deliver_notifications: true,
      custom_tweet: null,
      tweet_id: null,
    })),
    components: record.componentIds.flatMap((id) => {
      const component = byId.get(id)
      return component ? [v2Component(component, timeZone)] : []
    }),
  }
  return record.kind === 'maintenance'
    ? { ...base, scheduled_for: isoOrNull(record.scheduledFor), scheduled_until: isoOrNull(record.scheduledUntil) }
    : base
}

/** The page's overall status (indicator, words, and the state a translation words). */
export function currentStatus(page: { bannerFollowsChecks: boolean }, content: PublicComponents, unresolved: PublicRecord[]) {
  return overallStatus(
    content.components.map((component) => bannerStatusOf(component, page)),
    unresolved.map((incident) => incident.impact as IncidentImpact),
  )
}

/** The page's `status` object: Statuspage's indicator and its description (in English, as Statuspage's API). */
export function v2Status(page: { bannerFollowsChecks: boolean }, content: PublicComponents, unresolved: PublicRecord[]) {
  const { indicator, description } = currentStatus(page, content, unresolved)
  return { indicator, description }
}
