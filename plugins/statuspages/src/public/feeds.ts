import escapeHtml from 'escape-html'
import { Feed } from 'feed'
import type { Executor } from '@svc/db'
import { localizedUrl, messagesOf } from '../i18n/locales.js'
import type { IncidentStatus, MaintenanceStatus } from '../model.js'
import { publicRecords } from '../queries/public.js'
import type { PublicPage } from './cache.js'
import { HISTORY_LIMIT } from './documents.js'

/**
 * The page's history as a feed (the `feed` package writes Atom 1.0 and RSS 2.0): the newest
 * incidents and maintenances, each entry holding its updates, newest first.
 */
export async function renderFeed(
  db: Executor,
  page: PublicPage,
  reader: readonly string[],
  root: string,
  format: 'atom' | 'rss',
  locale: string,
): Promise<string> {
  const [incidents, maintenances] = await Promise.all([
    publicRecords(db, page.id, 'incident', { which: 'recent', limit: HISTORY_LIMIT }, reader),
    publicRecords(db, page.id, 'maintenance', { which: 'recent', limit: HISTORY_LIMIT }, reader),
  ])
  const records = [...incidents, ...maintenances].sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime()).slice(0, HISTORY_LIMIT)
  const t = messagesOf(locale)
  const words = (status: string) => t.progress[status as IncidentStatus | MaintenanceStatus] ?? status
  const feed = new Feed({
    // One feed per language, each with an id of its own (RFC 4287 4.2.6); the default language's
    // keeps the id the page's only feed had before it took other languages.
    id: locale === page.locales[0] ? root : `${root}?locale=${locale}`,
    title: t.page.history(page.name),
    language: locale,
    link: localizedUrl(page.locales, root, locale),
    updated: records[0]?.updatedAt ?? page.updatedAt,
    generator: 'incident-platform',
    copyright: page.name,
    // RFC 4287 wants an author on every entry or on the feed; the page speaks for all its entries.
    author: { name: page.name, link: root },
    feedLinks: {
      atom: localizedUrl(page.locales, `${root}history.atom`, locale),
      rss: localizedUrl(page.locales, `${root}history.rss`, locale),
    },
  })
  for (const record of records) {
    const content = record.updates
      .map(
        (update) =>
          `<p><small>${update.displayAt.toISOString()}</small><br><strong>${escapeHtml(words(update.status))}</strong> - ${escapeHtml(update.body)}</p>`,
      )
      .join('')
    const latest = record.updates[0]
    feed.addItem({
      id: `${root}#${record.kind}-${record.id}`,
      // Text for readers that show only RSS's <description> (Atom's <summary>): the latest update.
      // Entry titles and summaries are HTML fields (Atom's type="html"; RSS readers render both),
      // so names and updates are escaped like the content.
      description: escapeHtml(latest ? `${words(latest.status)} - ${latest.body}` : record.name),
      title: escapeHtml(record.name),
      link: `${localizedUrl(page.locales, root, locale)}#${record.kind}-${record.id}`,
      date: record.updatedAt,
      published: record.createdAt,
      content,
    })
  }
  return format === 'atom' ? feed.atom1() : feed.rss2()
}
