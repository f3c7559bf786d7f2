import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { matchLocale } from '../i18n/locales.js'
import type { ComponentStatus } from '../model.js'
import { componentsOfPage } from '../queries/components.js'
import type { TemplateRow, TemplateText } from '../queries/templates.js'

/**
 * A template's words in the language asked for (a region reads as its language), else in the
 * page's default, which every template is written in.
 */
export function templateText(template: Pick<TemplateRow, 'texts'>, locales: readonly string[], asked?: string): TemplateText {
  const written = Object.keys(template.texts)
  const language = (asked && matchLocale(written, asked)) || (locales[0] && template.texts[locales[0]] ? locales[0] : written[0]!)
  return template.texts[language]!
}

/** The statuses a template gives components, of those that are still the page's (one removed since is skipped). */
export async function templateStatuses(
  db: Executor,
  page: { id: string; organizationId: string },
  template: Pick<TemplateRow, 'components'>,
): Promise<Map<string, ComponentStatus>> {
  const ids = template.components.map((component) => component.componentId)
  const present = new Set((await componentsOfPage(db, page, ids)).map((row) => row.id))
  return new Map(template.components.filter((component) => present.has(component.componentId)).map((c) => [c.componentId, c.status]))
}

/** Checks a template's texts against the page's languages: each one of them, the default among them. */
export function checkTexts(texts: Record<string, unknown>, locales: readonly string[]): void {
  for (const language of Object.keys(texts))
    if (!locales.includes(language)) throw invalidField(`texts/${language}`, `this status page is in ${locales.join(', ')}`)
  const fallback = locales[0] ?? 'en'
  if (!Object.hasOwn(texts, fallback)) throw invalidField('texts', `must be written in the page’s default language (${fallback})`)
}
