import type { Named } from './context.js'
import { entriesOf, readYaml, type FieldPath, type ParsedFile } from './files.js'
import type { Kind } from './kind.js'
import { kinds } from './kinds/index.js'

/** One entry of a file, with where it is, for messages. */
export interface Entry {
  kind: Kind
  value: Record<string, unknown>
  file: ParsedFile
  /** Its path in the file: `['teams', 3]`. */
  at: FieldPath
}

/** The entries of a directory's files, by kind (a kind whose file is absent: undefined, left as it is). */
export type Desired = Map<Kind, Entry[] | undefined>

/** Reads every kind's file of the directory, each entry checked against its schema and named once. */
export async function readDirectory(directory: string): Promise<Desired> {
  const desired: Desired = new Map()
  for (const kind of kinds) {
    const file = await readYaml(directory, kind.file)
    if (!file) {
      desired.set(kind, undefined)
      continue
    }
    const values = kind.singleton
      ? singletonOf(file, kind)
      : entriesOf<Record<string, unknown>>(file, kind.key, kind.entry).map((value, index) => ({ value, at: [kind.key, index] }))
    const seen = new Map<string, number>()
    const entries: Entry[] = []
    for (const { value, at } of values) {
      const name = kind.identity(value)
      if (seen.has(name)) throw file.problem(at, `${kind.noun} ${name} is named twice (also entry ${seen.get(name)! + 1})`)
      seen.set(name, Number(at[1] ?? 0))
      for (const problem of kind.problems?.(value) ?? []) throw file.problem([...at, ...problem.at], problem.message)
      entries.push({ kind, value: kind.normal ? kind.normal(value) : value, file, at })
    }
    desired.set(kind, entries)
  }
  return desired
}

/** A kind of one entry (the correlation rules): the file's key holds the entry itself. */
function singletonOf(file: ParsedFile, kind: Kind) {
  const [value] = entriesOf<Record<string, unknown>>(file, kind.key, kind.entry, true)
  return value ? [{ value, at: [kind.key] }] : []
}

/** The names the files define, by what others call them, for checking references before anything is written. */
export function definedNames(desired: Desired): Map<Named, Set<string>> {
  const defined = new Map<Named, Set<string>>()
  const add = (named: Named, name: string) => defined.set(named, (defined.get(named) ?? new Set()).add(name))
  for (const [kind, entries] of desired) {
    for (const entry of entries ?? []) {
      if (kind.names) add(kind.names, kind.identity(entry.value))
      if (kind.names === 'statusPages')
        for (const component of (entry.value.components ?? []) as Array<{ name: string }>)
          add('components', `${kind.identity(entry.value)}/${component.name}`)
    }
  }
  return defined
}
