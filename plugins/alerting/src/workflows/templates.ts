import Mustache from 'mustache'

// The words a workflow writes about an incident (a status page update, a chat message, an RCA's
// title) are Mustache templates (decision 0031, "Templates"): `{{incident.title}}`,
// `{{fields.impact}}`. Only plain variables of the names below: a section, partial or unknown
// name is refused when the workflow is saved, so a run never renders an empty hole.

/** What a template may name, each with what it holds. */
export const TEMPLATE_NAMES = {
  'incident.reference': 'INC-n',
  'incident.title': 'its title',
  'incident.severity': 'its severity, e.g. SEV2',
  'incident.status': 'its status',
  'incident.type': 'its type’s name (empty without one)',
  'incident.summary': 'its summary (empty without one)',
  'incident.url': 'its address in the API',
  'workflow.name': 'the workflow’s name',
} as const
const FIELD_NAME = /^fields\.[a-z][a-z0-9_]{0,39}$/

export const TEMPLATE_HELP = `A Mustache template of ${Object.keys(TEMPLATE_NAMES)
  .map((name) => `{{${name}}}`)
  .join(', ')} and {{fields.<key>}} (a custom field; a list joins with ", ")`

/** Why the template cannot be rendered, or undefined when it can. */
export function templateProblem(template: string): string | undefined {
  let spans: ReturnType<typeof Mustache.parse>
  try {
    spans = Mustache.parse(template)
  } catch (error) {
    return `is not a valid template: ${(error as Error).message}`
  }
  for (const [kind, name] of spans) {
    if (kind === 'text' || kind === '!') continue
    if (kind !== 'name' && kind !== '&') return `uses {{${kind}${name}}}: only plain {{name}} variables are taken`
    if (!Object.hasOwn(TEMPLATE_NAMES, name) && !FIELD_NAME.test(name))
      return `names {{${name}}}, which is none of ${Object.keys(TEMPLATE_NAMES).join(', ')} or fields.<key>`
  }
  return undefined
}

export interface TemplateView {
  incident: { reference: string; title: string; severity: string; status: string; type: string; summary: string; url: string }
  fields: Record<string, unknown>
  workflow: { name: string }
}

/** The template with its names filled in, as text: nothing is HTML-escaped (each destination escapes for itself). */
export function renderTemplate(template: string, view: TemplateView): string {
  const fields = Object.fromEntries(
    Object.entries(view.fields).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : String(value ?? '')]),
  )
  return Mustache.render(template, { ...view, fields }, undefined, { escape: (value: unknown) => String(value) })
}
