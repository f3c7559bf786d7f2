import { readFile, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { Type, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { isMap, LineCounter, parseDocument, stringify, type Document } from 'yaml'

/** A path into a file's data: `['teams', 0, 'members', 1, 'email']`. */
export type FieldPath = Array<string | number>

/** Bad input in a file: where (file, line, field) and what is wrong. Nothing was changed. */
export class FileProblem extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${file}:${line}: ${field ? `${field}: ` : ''}${problem}`)
  }
}

/** `teams[0].members[1].email` */
export const fieldName = (at: FieldPath) =>
  at.reduce<string>((name, part) => (typeof part === 'number' ? `${name}[${part}]` : name ? `${name}.${part}` : part), '')

/** One file of a directory, parsed: its data, and the line each field is on. */
export class ParsedFile {
  constructor(
    readonly file: string,
    readonly data: unknown,
    private readonly document: Document,
    private readonly lines: LineCounter,
  ) {}

  /** The line of the field, or of the nearest enclosing field the file has. */
  lineOf(at: FieldPath): number {
    for (let depth = at.length; depth >= 0; depth--) {
      const node = this.document.getIn(at.slice(0, depth), true) as { range?: [number, number, number] } | undefined
      if (node && typeof node === 'object' && node.range) return this.lines.linePos(node.range[0]).line
    }
    return 1
  }

  problem(at: FieldPath, message: string): FileProblem {
    return new FileProblem(this.file, this.lineOf(at), fieldName(at), message)
  }
}

/** Reads `file` of `directory`, or undefined when the directory has none. */
export async function readYaml(directory: string, file: string): Promise<ParsedFile | undefined> {
  let text: string
  try {
    text = await readFile(path.join(directory, file), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const lines = new LineCounter()
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true })
  const [error] = document.errors
  if (error) throw new FileProblem(file, lines.linePos(error.pos[0]).line, '', `not YAML: ${error.message.split('\n')[0]}`)
  if (!isMap(document.contents) && document.contents !== null) throw new FileProblem(file, 1, '', 'must be a mapping')
  return new ParsedFile(file, document.toJS() ?? {}, document, lines)
}

/**
 * The entries of a parsed file under `key`, checked against `entry` (defaults filled in): the
 * first wrong field is a FileProblem naming its line. A file without the key has no entries.
 */
export function entriesOf<E>(parsed: ParsedFile, key: string, entry: TSchema, single = false): E[] {
  const schema = Type.Object({ [key]: Type.Optional(single ? entry : Type.Array(entry)) }, { additionalProperties: false })
  const data = Value.Default(schema, structuredClone(parsed.data))
  const [first] = Value.Errors(schema, data)
  if (first) {
    const at = first.instancePath
      .split('/')
      .slice(1)
      .map((part) => (/^\d+$/.test(part) ? Number(part) : part.replaceAll('~1', '/').replaceAll('~0', '~')))
    const extra =
      first.keyword === 'additionalProperties'
        ? ` (${JSON.stringify((first.params as { additionalProperties?: string[] }).additionalProperties ?? [])})`
        : ''
    throw parsed.problem(at, `${first.message}${extra}`)
  }
  const found = (data as Record<string, unknown>)[key]
  return (single ? (found === undefined ? [] : [found]) : (found ?? [])) as E[]
}

/** Writes `{key: entries}` as YAML, with the line editors read the file's JSON Schema from. */
export async function writeYaml(directory: string, file: string, key: string, entries: unknown, schemaFile: string): Promise<void> {
  await mkdir(directory, { recursive: true })
  const text = `# yaml-language-server: $schema=${schemaFile}\n${stringify({ [key]: entries }, { lineWidth: 0, aliasDuplicateObjects: false })}`
  await writeFile(path.join(directory, file), text)
}
