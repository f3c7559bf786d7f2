// What other surfaces and the platform read of status pages (ARCHITECTURE.md, "Between surfaces").
import type { Executor, Page } from '@svc/db'
import { containing, paged } from '@svc/db'
import type { WebhookTarget } from '@svc/notifier'
import { publicUrlOf } from './pages/public-url.js'
import { webhookTargetOf } from './queries/subscribers.js'
import { SUBSCRIBER_RECIPIENT } from './subscribers/notifications.js'

/** The organization's status pages, for the platform's `GET /organizations/:orgId/status-pages`. */
export async function statusPagesOf(db: Executor, organizationId: string, page: Page, productUrl: string) {
  const { rows, total } = await paged(
    db.selectFrom('divinux.statusPages').where('organizationId', '=', organizationId),
    (query) =>
      query.select(['id', 'name', 'slug', 'customDomain', 'published', 'createdAt', 'updatedAt']).orderBy('createdAt').orderBy('id'),
    page,
  )
  return { rows: rows.map((row) => ({ ...row, publicUrl: publicUrlOf(productUrl, row) })), total }
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
    return row?.url && row.secret ? { url: row.url, secret: row.secret } : undefined
  }
}
