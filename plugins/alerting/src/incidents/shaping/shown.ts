import type { Executor } from '@svc/db'
import { emailsOf } from '../../oncall/index.js'
import { fieldsByKey, findType } from './queries.js'

/**
 * An incident's type name and its set custom fields as people read them (cards, reports): by the
 * field's name, in the order of the fields' keys, a member by e-mail, several values by commas.
 */
export async function shownFieldsOf(
  db: Executor,
  organizationId: string,
  incident: { typeId: string | null; fields: unknown },
): Promise<{ type?: string; fields: Array<{ key: string; name: string; value: string }> }> {
  const values = (incident.fields ?? {}) as Record<string, unknown>
  const keys = Object.keys(values).sort()
  const type = incident.typeId ? await findType(db, organizationId, incident.typeId) : undefined
  if (keys.length === 0) return type ? { type: type.name, fields: [] } : { fields: [] }
  const definitions = await fieldsByKey(db, organizationId)
  const users = keys.flatMap((key) => (definitions.get(key)?.kind === 'user' ? [String(values[key])] : []))
  const emails = users.length > 0 ? await emailsOf(db, users) : new Map<string, string>()
  const fields = keys.flatMap((key) => {
    const definition = definitions.get(key)
    if (!definition) return []
    const value = values[key]
    const text = Array.isArray(value)
      ? value.join(', ')
      : definition.kind === 'user'
        ? (emails.get(String(value)) ?? String(value))
        : String(value)
    return [{ key, name: definition.name, value: text }]
  })
  return { ...(type ? { type: type.name } : {}), fields }
}
