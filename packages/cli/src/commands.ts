import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Type } from 'typebox'
import type { Desired } from './directory.js'
import { writeYaml } from './files.js'
import type { Context, Kind } from './kind.js'
import { kinds } from './kinds/index.js'
import { describe, differs, planOf, type Plan } from './plan.js'

/** Where the JSON Schemas of a pulled directory's files are, for editors (yaml-language-server). */
export const SCHEMA_FOLDER = '.schemas'

/** The JSON Schema of one kind's file: a field with a default may be left out, so it is not required. */
export function fileSchema(kind: Kind): object {
  const list = kind.singleton ? kind.entry : Type.Array(kind.entry)
  const schema = Type.Object({ [kind.key]: Type.Optional(list) }, { additionalProperties: false })
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `${kind.file} (divinux configuration as code)`,
    ...JSON.parse(JSON.stringify(schema), withoutRequiredDefaults),
  }
}

/** A JSON.parse reviver: an object schema's `required` without the properties that have a default. */
function withoutRequiredDefaults(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  const { required, ...rest } = value as { required?: string[]; properties?: Record<string, { default?: unknown }> }
  if (!required || !rest.properties) return value
  const still = required.filter((name) => rest.properties![name]?.default === undefined)
  return still.length > 0 ? { ...rest, required: still } : rest
}

/** Writes every kind's JSON Schema into `directory`. */
export async function writeSchemas(directory: string): Promise<void> {
  await mkdir(directory, { recursive: true })
  for (const kind of kinds) await writeFile(path.join(directory, `${kind.key}.json`), `${JSON.stringify(fileSchema(kind), null, 2)}\n`)
}

/** `pull <dir>`: the organization's configuration, one file per kind, with the files' schemas. */
export async function pull(context: Context, directory: string): Promise<void> {
  await writeSchemas(path.join(directory, SCHEMA_FOLDER))
  for (const kind of kinds) {
    const live = await kind.live(context)
    const entries = live.map((row) => row.entry).sort((a, b) => kind.identity(a).localeCompare(kind.identity(b)))
    await writeYaml(directory, kind.file, kind.key, kind.singleton ? entries[0] : entries, `./${SCHEMA_FOLDER}/${kind.key}.json`)
    context.say(`${kind.file}: ${kind.singleton ? 'written' : `${entries.length} ${kind.noun}${entries.length === 1 ? '' : 's'}`}`)
  }
}

/** `plan <dir>`: prints the difference; answers whether there is one. */
export async function plan(context: Context, desired: Desired, prune: boolean): Promise<boolean> {
  const planned = await planOf(context, desired, prune)
  for (const line of describe(planned)) context.say(line)
  return differs(planned)
}

/**
 * `apply <dir>`: makes the organization match the files, kind by kind in dependency order, and
 * stops at the first refusal with the server's message; with `prune`, then deletes what the files
 * no longer name, in the reverse order.
 */
export async function apply(context: Context, desired: Desired, prune: boolean): Promise<Plan> {
  const planned = await planOf(context, desired, prune)
  for (const kind of kinds) {
    const entries = desired.get(kind)
    if (!entries) continue
    for (const change of planned.changes.filter((candidate) => candidate.kind === kind)) {
      let notes
      if (change.action === 'create') notes = await kind.create(context, change.entry!.value)
      else if (change.action === 'change') notes = await kind.update(context, change.live!, change.entry!.value)
      else continue
      if (kind.names) context.names.changed(kind.names)
      context.say(`${change.action === 'create' ? 'created' : 'changed'} ${kind.noun} ${change.name}`)
      for (const note of notes ?? []) context.say(`    ${note}`)
    }
    await kind.settle?.(
      context,
      entries.map((entry) => entry.value),
      planned.live.get(kind) ?? [],
    )
    if (kind.names) context.names.changed(kind.names)
  }
  for (const kind of [...kinds].reverse())
    for (const change of planned.changes.filter((candidate) => candidate.kind === kind && candidate.action === 'delete')) {
      await kind.remove(context, change.live!)
      if (kind.names) context.names.changed(kind.names)
      context.say(`deleted ${kind.noun} ${change.name}`)
    }
  const counts = (action: string) => planned.changes.filter((change) => change.action === action).length
  context.say(`${counts('create')} created, ${counts('change')} changed, ${counts('delete')} deleted, ${planned.unchanged} unchanged`)
  return planned
}
