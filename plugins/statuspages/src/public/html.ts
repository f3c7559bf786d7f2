import escapeHtml from 'escape-html'
import type { Executor } from '@svc/db'
import { dateTime, percentage } from '../i18n/format.js'
import { localizedUrl, messagesOf } from '../i18n/locales.js'
import type { Messages } from '../i18n/messages.js'
import type { ComponentStatus, IncidentStatus, MaintenanceStatus } from '../model.js'
import { signInDomains } from '../private/readers.js'
import { publicComponents, publicRecords, type PublicRecord } from '../queries/public.js'
import type { PublicPage } from './cache.js'
import { HISTORY_LIMIT, componentUptimes } from './documents.js'
import type { UptimeDay } from './uptime.js'
import { currentStatus } from './v2.js'
import { assetFileName } from '../branding/assets.js'
import { styleHash, themeRule } from '../branding/theme.js'

const colors: Record<ComponentStatus, string> = {
  operational: '#2e8540',
  under_maintenance: '#3558a8',
  degraded_performance: '#c9a100',
  partial_outage: '#d9700a',
  major_outage: '#c0262d',
}
const indicatorColors = {
  none: colors.operational,
  minor: colors.degraded_performance,
  major: colors.partial_outage,
  critical: colors.major_outage,
}

// Colours are classes, not style attributes, so the page's CSP allows this one style sheet by its
// hash and nothing else inline (no script at all). They come last: they win over `.bars span`.
const colorRules = [
  ...Object.entries(colors).map(([status, color]) => `.bars .d-${status}{background:${color}}.t-${status}{color:${color}}`),
  ...Object.entries(indicatorColors).map(([indicator, color]) => `.i-${indicator}{background:${color}}`),
].join('')

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:var(--background);color:var(--text)}
main{max-width:860px;margin:0 auto;padding:24px 16px 48px}
header.brand{background:var(--header-background);color:var(--header-text)}
header.brand .inner{max-width:860px;margin:0 auto;padding:16px;display:flex;align-items:center;gap:14px;flex-wrap:wrap}
header.brand img{max-height:40px;width:auto}header.brand h1{margin:0;flex:1}
header.brand nav a{color:var(--header-text);margin-left:12px}
h1{font-size:1.6rem;margin:0 0 16px}h2{font-size:1.15rem;margin:32px 0 12px}
.banner{color:#fff;border-radius:6px;padding:16px 20px;font-size:1.15rem;font-weight:600}
.card{background:var(--card);border:1px solid var(--border);border-radius:6px;padding:12px 16px;margin:8px 0}
.component{display:flex;justify-content:space-between;align-items:baseline;gap:12px}
.status{font-size:.9rem;font-weight:600}
.bars{display:flex;gap:2px;margin:8px 0 2px;height:28px}
.bars span{flex:1;border-radius:2px;background:#d5d9e0}
.legend{display:flex;justify-content:space-between;font-size:.75rem;color:var(--muted)}
.group>.name{font-weight:600}.group .card{margin-left:12px}
.update{margin:8px 0 0;font-size:.95rem}.update time,.meta{color:var(--muted);font-size:.8rem}
form{display:flex;gap:8px;flex-wrap:wrap}input[type=email]{flex:1;min-width:200px;padding:8px;border:1px solid var(--border);border-radius:4px}
button{padding:8px 14px;border:0;border-radius:4px;background:var(--button);color:var(--button-text)}
footer{margin-top:40px;font-size:.8rem;color:var(--muted)}a{color:var(--link)}
${colorRules}`

const STYLE_HASH = styleHash(STYLE)

/**
 * The page's Content-Security-Policy: its own style sheet and its theme's variables (each by
 * hash), images from itself (its logo), forms to itself, no script, no framing.
 */
export function htmlCsp(page: Pick<PublicPage, 'theme'>): string {
  return `default-src 'none'; style-src ${STYLE_HASH} ${styleHash(themeRule(page.theme))}; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`
}

/** Where a page serves its logo or favicon (`<sha256>|<content type>`), under its root. */
export function assetUrl(root: string, asset: string | null): string | null {
  if (!asset) return null
  const [sha256 = '', contentType = ''] = asset.split('|')
  return `${root}assets/${assetFileName({ sha256, contentType })}`
}

export interface HtmlLinks {
  /** The page's public root, ending in `/`. */
  root: string
  /** The language to render in, one of the page's. */
  locale: string
}

const e = (text: string | null | undefined) => escapeHtml(text ?? '')

function bar(t: Messages, day: UptimeDay): string {
  const worst: ComponentStatus | null =
    day.uptime === null
      ? null
      : day.majorOutageSeconds > 0
        ? 'major_outage'
        : day.partialOutageSeconds > 0
          ? 'partial_outage'
          : day.degradedSeconds > 0
            ? 'degraded_performance'
            : 'operational'
  const words = day.uptime === null ? t.page.noData : t.page.uptime(percentage(t, day.uptime))
  return `<span${worst ? ` class="d-${worst}"` : ''} title="${day.date}: ${words}"></span>`
}

function recordHtml(t: Messages, record: PublicRecord, timeZone: string): string {
  const updates = record.updates
    .map(
      (update) =>
        `<p class="update"><strong>${e(t.progress[update.status as IncidentStatus | MaintenanceStatus] ?? update.status)}</strong> – ${e(update.body)}<br><time datetime="${update.displayAt.toISOString()}">${e(dateTime(t, update.displayAt, timeZone))}</time></p>`,
    )
    .join('')
  const window =
    record.kind === 'maintenance' && record.scheduledFor && record.scheduledUntil
      ? `<div class="meta">${e(t.page.scheduled(dateTime(t, record.scheduledFor, timeZone), dateTime(t, record.scheduledUntil, timeZone)))}</div>`
      : ''
  return `<article class="card" id="${record.kind}-${record.id}"><strong>${e(record.name)}</strong>${window}${updates}</article>`
}

/**
 * The public page, rendered on the server as plain HTML and CSS (no script: it works with
 * JavaScript off): overall status, components with their 90-day uptime bars, unresolved
 * incidents, maintenance in progress and upcoming, the subscription form, and incident history.
 */
export async function renderHtml(db: Executor, page: PublicPage, reader: readonly string[], links: HtmlLinks, now: Date): Promise<string> {
  const [content, unresolved, current, history] = await Promise.all([
    publicComponents(db, page.id, reader),
    publicRecords(db, page.id, 'incident', { which: 'unresolved' }, reader),
    publicRecords(db, page.id, 'maintenance', { which: 'current' }, reader),
    publicRecords(db, page.id, 'incident', { which: 'recent', limit: HISTORY_LIMIT }, reader),
  ])
  const t = messagesOf(links.locale)
  const status = currentStatus(page, content, unresolved)
  const uptimes = await componentUptimes(
    db,
    page.id,
    content.components.filter((component) => component.showUptime),
    now,
  )
  const componentHtml = (component: (typeof content.components)[number]) => {
    const uptime = uptimes.get(component.id)
    const bars = uptime
      ? `<div class="bars" aria-label="${e(t.page.uptimeLabel)}">${uptime.days.map((day) => bar(t, day)).join('')}</div><div class="legend"><span>${e(t.page.ninetyDaysAgo)}</span><span>${e(t.page.uptime(uptime.uptimePercentage === null ? '–' : percentage(t, uptime.uptimePercentage)))}</span><span>${e(t.page.today)}</span></div>`
      : ''
    const description = component.description ? `<div class="meta">${e(component.description)}</div>` : ''
    return `<div class="card"><div class="component"><span class="name">${e(component.name)}</span><span class="status t-${component.status}">${e(t.componentStatus[component.status as ComponentStatus])}</span></div>${description}${bars}</div>`
  }
  const grouped = content.groups
    .map((group) => {
      const members = content.components.filter((component) => component.groupId === group.id)
      return {
        position: group.position,
        html: `<section class="group"><div class="name">${e(group.name)}</div>${members.map(componentHtml).join('')}</section>`,
      }
    })
    .concat(
      content.components
        .filter((component) => !component.groupId)
        .map((component) => ({ position: component.position, html: componentHtml(component) })),
    )
    .sort((a, b) => a.position - b.position)
    .map((item) => item.html)
    .join('')
  const active = current.filter((record) => record.status !== 'scheduled')
  const upcoming = current.filter((record) => record.status === 'scheduled')
  const past = history.filter((record) => record.status === 'resolved')
  const section = (title: string, records: PublicRecord[]) =>
    records.length > 0 ? `<h2>${e(title)}</h2>${records.map((record) => recordHtml(t, record, page.timeZone)).join('')}` : ''
  const subscribe = page.allowSubscribers
    ? `<h2>${e(t.page.subscribeHeading)}</h2><form method="post" action="${e(links.root)}subscribers"><input type="hidden" name="locale" value="${e(links.locale)}"><input type="email" name="email" required placeholder="you@example.com" aria-label="${e(t.page.emailLabel)}"><button type="submit">${e(t.page.subscribeButton)}</button></form>`
    : ''
  const support = page.supportUrl ? ` · <a href="${e(page.supportUrl)}">${e(t.page.support)}</a>` : ''
  const feed = (name: string) => e(localizedUrl(page.locales, `${links.root}${name}`, links.locale))
  // Each language's page names the others: a link to follow, and `hreflang` alternates for search engines.
  const others = page.locales.length > 1 ? page.locales.filter((locale) => locale !== links.locale) : []
  const alternates = others
    .map((locale) => `\n<link rel="alternate" hreflang="${e(locale)}" href="${e(localizedUrl(page.locales, links.root, locale))}">`)
    .join('')
  const languages =
    others.length > 0
      ? `<nav class="languages" aria-label="${e(t.page.languages)}">${others.map((locale) => `<a href="${e(localizedUrl(page.locales, links.root, locale))}" hreflang="${e(locale)}" lang="${e(locale)}">${e(messagesOf(locale).languageName)}</a>`).join(' · ')}</nav>`
      : ''
  const historyTitle = e(t.page.history(page.name))
  // A private page's reader, or an audience's, may have signed in by e-mail or followed a link
  // (decision 0015, "Private pages", "Audiences"); on a public page with audiences others may sign in.
  const signOut =
    page.visibility === 'private' || reader.length > 0
      ? `<form method="post" action="${e(links.root)}access/sign-out"><button type="submit">${e(t.access.signOut)}</button></form>`
      : signInDomains(page).length > 0
        ? `<form method="post" action="${e(links.root)}access"><input type="hidden" name="locale" value="${e(links.locale)}"><p class="meta">${e(t.access.requestText)}</p><input type="email" name="email" required autocomplete="email" placeholder="you@example.com" aria-label="${e(t.page.emailLabel)}"> <button type="submit">${e(t.access.requestButton)}</button></form>`
        : ''
  const logo = assetUrl(links.root, page.logo)
  const favicon = assetUrl(links.root, page.favicon)
  const headerLinks = page.headerLinks.map((link) => `<a href="${e(link.url)}" rel="noopener">${e(link.label)}</a>`).join('')
  const footerText = page.footerText ? `<p class="meta">${e(page.footerText)}</p>` : ''
  return `<!doctype html>
<html lang="${e(links.locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${favicon ? `\n<link rel="icon" href="${e(favicon)}">` : ''}
<title>${e(t.page.title(page.name))}</title>${page.visibility === 'private' ? '\n<meta name="robots" content="noindex, nofollow">' : ''}
<link rel="alternate" type="application/atom+xml" title="${historyTitle}" href="${feed('history.atom')}">
<link rel="alternate" type="application/rss+xml" title="${historyTitle}" href="${feed('history.rss')}">${alternates}
<style>${STYLE}</style><style>${themeRule(page.theme)}</style></head>
<body><header class="brand"><div class="inner">${logo ? `<img src="${e(logo)}" alt="">` : ''}<h1>${e(page.name)}</h1>${headerLinks ? `<nav>${headerLinks}</nav>` : ''}</div></header><main>
<div class="banner i-${status.indicator}" data-indicator="${status.indicator}">${e(t.overall[status.state])}</div>
${section(t.page.activeIncidents, unresolved)}${section(t.page.maintenanceInProgress, active)}
<h2>${e(t.page.components)}</h2>${grouped || `<p class="meta">${e(t.page.noComponents)}</p>`}
${section(t.page.upcomingMaintenance, upcoming)}${subscribe}
<h2>${e(t.page.incidentHistory)}</h2>${past.length > 0 ? past.map((record) => recordHtml(t, record, page.timeZone)).join('') : `<p class="meta">${e(t.page.noIncidents)}</p>`}
<footer>${footerText}${e(t.page.timesIn(page.timeZone))} · <a href="${feed('history.atom')}">Atom</a> · <a href="${feed('history.rss')}">RSS</a> · <a href="${e(links.root)}api/v2/summary.json">API</a>${support}${languages ? `<br>${languages}` : ''}${signOut}</footer>
</main></body></html>
`
}
