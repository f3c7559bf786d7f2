import type { Named } from './context.js'
import { definedNames, type Desired, type Entry } from './directory.js'
import { differences, type Context, type Kind, type Live } from './kind.js'

export interface Change {
  kind: Kind
  action: 'create' | 'change' | 'delete' | 'keep'
  name: string
  entry?: Entry
  live?: Live<Record<string, unknown>>
  fields: ReturnType<typeof differences>
}

export interface Plan {
  changes: Change[]
  /** The organization's entries of each kind before anything was written. */
  live: Map<Kind, Array<Live<Record<string, unknown>>>>
  unchanged: number
}

/** What `kind` says a name is, for messages: `people` are e-mails. */
const what = (named: Named) =>
  ({
    people: 'member of the organization with the e-mail',
    teams: 'team',
    schedules: 'schedule',
    escalationPolicies: 'escalation policy',
    services: 'service with the key',
    chat: 'chat integration',
    webhooks: 'outbound webhook',
    trackers: 'tracker',
    statusPages: 'status page',
    components: 'status page component',
  })[named]

/**
 * Checks every name the files give: each must be the organization's already or defined in the
 * files (people: members of the organization). The first that is neither is a FileProblem; nothing
 * has been written yet.
 */
async function checkReferences(context: Context, desired: Desired): Promise<void> {
  const defined = definedNames(desired)
  for (const entries of desired.values())
    for (const entry of entries ?? [])
      for (const reference of entry.kind.references(entry.value)) {
        if (defined.get(reference.to)?.has(reference.name)) continue
        if ((await context.names.ids(reference.to)).has(reference.name)) continue
        throw entry.file.problem([...entry.at, ...reference.at], `no ${what(reference.to)} ${reference.name}`)
      }
}

/** The difference between the files and the organization: what apply would create, change and (with prune) delete. */
export async function planOf(context: Context, desired: Desired, prune: boolean): Promise<Plan> {
  await checkReferences(context, desired)
  const plan: Plan = { changes: [], live: new Map(), unchanged: 0 }
  for (const [kind, entries] of desired) {
    if (!entries) continue
    const live = await kind.live(context)
    plan.live.set(kind, live)
    const byName = new Map<string, Live<Record<string, unknown>>>()
    for (const row of live) {
      const name = kind.identity(row.entry)
      if (byName.has(name)) throw new Error(`the organization has two of its ${kind.noun}s named ${name}: rename one, then run this again`)
      byName.set(name, row)
    }
    const named = new Set<string>()
    for (const entry of entries) {
      const name = kind.identity(entry.value)
      named.add(name)
      const row = byName.get(name)
      if (!row) {
        for (const problem of kind.creatable?.(context, entry.value) ?? [])
          throw entry.file.problem([...entry.at, ...problem.at], problem.message)
        plan.changes.push({ kind, action: 'create', name, entry, fields: [] })
        continue
      }
      const compared = Object.fromEntries(Object.entries(entry.value).filter(([field]) => !kind.unseen?.includes(field)))
      const fields = differences(kind.normal ? kind.normal(row.entry) : row.entry, compared, kind.whole)
      if (fields.length > 0) plan.changes.push({ kind, action: 'change', name, entry, live: row, fields })
      else plan.unchanged++
    }
    if (kind.singleton) continue
    for (const [name, row] of byName)
      if (!named.has(name)) plan.changes.push({ kind, action: prune ? 'delete' : 'keep', name, live: row, fields: [] })
  }
  return plan
}

/** Whether applying the plan would change anything. */
export const differs = (plan: Plan) => plan.changes.some((change) => change.action !== 'keep')

const shown = (value: unknown) => {
  const text = JSON.stringify(value ?? null)
  return text.length > 160 ? `${text.slice(0, 157)}…` : text
}

/** The plan as people read it: one line per entry, one more per field that changes. */
export function describe(plan: Plan): string[] {
  const lines: string[] = []
  const sign = { create: '+', change: '~', delete: '-', keep: '·' }
  for (const change of plan.changes) {
    const where = change.entry ? ` (${change.entry.file.file}:${change.entry.file.lineOf(change.entry.at)})` : ''
    const note =
      change.action === 'keep'
        ? ': not in the files, kept (--prune deletes it)'
        : change.action === 'delete'
          ? ': not in the files, deleted'
          : ''
    lines.push(`${sign[change.action]} ${change.kind.noun} ${change.name}${where}${note}`)
    for (const field of change.fields) lines.push(`    ${field.field}: ${shown(field.now)} → ${shown(field.wanted)}`)
  }
  const counts = (action: Change['action']) => plan.changes.filter((change) => change.action === action).length
  lines.push(`${counts('create')} to create, ${counts('change')} to change, ${counts('delete')} to delete, ${plan.unchanged} unchanged`)
  return lines
}
