import escapeHtml from 'escape-html'
import type { Executor } from '@svc/db'
import { publicComponents, publicRecords } from '../queries/public.js'
import type { PublicPage } from './cache.js'
import { localizedUrl, messagesOf } from '../i18n/locales.js'
import { currentStatus } from './v2.js'
import { styleHash, themeRule } from '../branding/theme.js'

/** Unresolved incidents the widget names; past this it says how many more there are. */
const LISTED_INCIDENTS = 3

const STYLE = `
html,body{margin:0;height:100%}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:14px;color:var(--text);background:var(--card)}
a.widget{display:block;height:100%;box-sizing:border-box;padding:10px 12px;border:1px solid var(--border);border-radius:6px;color:inherit;text-decoration:none}
.status{display:flex;align-items:center;gap:8px;font-weight:600}
.dot{width:10px;height:10px;border-radius:50%;flex:none}
.i-none{background:#2e8540}.i-minor{background:#c9a100}.i-major{background:#d9700a}.i-critical{background:#c0262d}
ul{margin:6px 0 0;padding-left:18px}li{margin:2px 0}
.page{margin-top:6px;font-size:12px;color:var(--link)}`

const STYLE_HASH = styleHash(STYLE)

/**
 * The widget's Content-Security-Policy: its own style sheet and its page's theme (by hash), no
 * script, and, unlike the full page, framing by any site: it is made for other people's pages.
 */
export function widgetCsp(page: Pick<PublicPage, 'theme'>): string {
  return `default-src 'none'; style-src ${STYLE_HASH} ${styleHash(themeRule(page.theme))}; base-uri 'none'; form-action 'none'; frame-ancestors *`
}

const e = (text: string | null | undefined) => escapeHtml(text ?? '')

/**
 * A small view of a page's status for an `<iframe>` on another site: the overall status, the
 * names of unresolved incidents, and a link that opens the full page in the top window. No script.
 */
export async function renderWidget(
  db: Executor,
  page: PublicPage,
  reader: readonly string[],
  root: string,
  locale: string,
): Promise<string> {
  const [content, unresolved] = await Promise.all([
    publicComponents(db, page.id, reader),
    publicRecords(db, page.id, 'incident', { which: 'unresolved' }, reader),
  ])
  const t = messagesOf(locale)
  const status = currentStatus(page, content, unresolved)
  const listed = unresolved.slice(0, LISTED_INCIDENTS).map((incident) => `<li>${e(incident.name)}</li>`)
  if (unresolved.length > LISTED_INCIDENTS) listed.push(`<li>${e(t.widget.more(unresolved.length - LISTED_INCIDENTS))}</li>`)
  return `<!doctype html>
<html lang="${e(locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${e(t.page.title(page.name))}</title>${page.visibility === 'private' ? '<meta name="robots" content="noindex, nofollow">' : ''}<style>${STYLE}</style><style>${themeRule(page.theme)}</style></head>
<body><a class="widget" href="${e(localizedUrl(page.locales, root, locale))}" target="_top" rel="noopener">
<div class="status" data-indicator="${status.indicator}"><span class="dot i-${status.indicator}"></span>${e(t.overall[status.state])}</div>
${listed.length > 0 ? `<ul>${listed.join('')}</ul>` : ''}
<div class="page">${e(t.widget.open(page.name))}</div>
</a></body></html>
`
}
