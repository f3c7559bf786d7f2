import type { Executor } from '@svc/db'
import type { ComponentStatus } from '../model.js'
import { componentHistory, publicComponents, publicRecords } from '../queries/public.js'
import type { PublicPage } from './cache.js'
import { PARTIAL_OUTAGE_WEIGHT, UPTIME_DAYS, uptimeOf } from './uptime.js'
import { v2Components, v2Page, v2Record, v2Status } from './v2.js'

/** How many incidents and maintenances the history documents list, as Statuspage's do. */
export const HISTORY_LIMIT = 50

/** The JSON documents under `api/v2/`, by file name. */
export const jsonDocuments = [
  'summary',
  'status',
  'components',
  'incidents',
  'incidents/unresolved',
  'scheduled-maintenances',
  'scheduled-maintenances/upcoming',
  'scheduled-maintenances/active',
  'uptime',
] as const
export type JsonDocument = (typeof jsonDocuments)[number]

/** Each component's uptime over the last 90 days, for uptime.json and the HTML page's bars. */
export async function componentUptimes(db: Executor, pageId: string, components: Array<{ id: string; createdAt: Date }>, now: Date) {
  const since = new Date(Math.floor(now.getTime() / 86_400_000) * 86_400_000 - (UPTIME_DAYS - 1) * 86_400_000)
  const history = await componentHistory(db, { pageId }, since)
  return new Map(
    components.map((component) => [
      component.id,
      uptimeOf(
        history
          .filter((change) => change.componentId === component.id)
          .map((change) => ({ status: change.status as ComponentStatus, changedAt: change.changedAt })),
        now,
      ),
    ]),
  )
}

/** Renders one of a page's JSON documents from the database. */
export async function renderJson(
  db: Executor,
  page: PublicPage,
  reader: readonly string[],
  name: JsonDocument,
  pageUrl: string,
  now: Date,
): Promise<unknown> {
  const content = await publicComponents(db, page.id, reader)
  const head = { page: v2Page(page, pageUrl) }
  const records = (list: Awaited<ReturnType<typeof publicRecords>>) =>
    list.map((record) => v2Record(record, content, pageUrl, page.timeZone))
  switch (name) {
    case 'summary': {
      const [unresolved, maintenances] = await Promise.all([
        publicRecords(db, page.id, 'incident', { which: 'unresolved' }, reader),
        publicRecords(db, page.id, 'maintenance', { which: 'current' }, reader),
      ])
      return {
        ...head,
        components: v2Components(content, page.timeZone),
        incidents: records(unresolved),
        scheduled_maintenances: records(maintenances),
        status: v2Status(page, content, unresolved),
      }
    }
    case 'status':
      return { ...head, status: v2Status(page, content, await publicRecords(db, page.id, 'incident', { which: 'unresolved' }, reader)) }
    case 'components':
      return { ...head, components: v2Components(content, page.timeZone) }
    case 'incidents':
      return {
        ...head,
        incidents: records(await publicRecords(db, page.id, 'incident', { which: 'recent', limit: HISTORY_LIMIT }, reader)),
      }
    case 'incidents/unresolved':
      return { ...head, incidents: records(await publicRecords(db, page.id, 'incident', { which: 'unresolved' }, reader)) }
    case 'scheduled-maintenances':
      return {
        ...head,
        scheduled_maintenances: records(await publicRecords(db, page.id, 'maintenance', { which: 'recent', limit: HISTORY_LIMIT }, reader)),
      }
    case 'scheduled-maintenances/upcoming':
      return { ...head, scheduled_maintenances: records(await publicRecords(db, page.id, 'maintenance', { which: 'upcoming' }, reader)) }
    case 'scheduled-maintenances/active':
      return { ...head, scheduled_maintenances: records(await publicRecords(db, page.id, 'maintenance', { which: 'active' }, reader)) }
    case 'uptime': {
      const shown = content.components.filter((component) => component.showUptime)
      const uptimes = await componentUptimes(db, page.id, shown, now)
      return {
        ...head,
        partial_outage_weight: PARTIAL_OUTAGE_WEIGHT,
        components: shown.map((component) => {
          const uptime = uptimes.get(component.id)!
          return {
            id: component.id,
            name: component.name,
            uptime_percentage: uptime.uptimePercentage,
            days: uptime.days.map((day) => ({
              date: day.date,
              uptime: day.uptime,
              major_outage_seconds: day.majorOutageSeconds,
              partial_outage_seconds: day.partialOutageSeconds,
              degraded_seconds: day.degradedSeconds,
              maintenance_seconds: day.maintenanceSeconds,
            })),
          }
        }),
      }
    }
  }
}
