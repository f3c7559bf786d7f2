import { parseArgs } from 'node:util'
import { connect, Refusal } from './api.js'
import { importBackstage } from './backstage.js'
import { apply, plan, pull, writeSchemas } from './commands.js'
import { Names } from './context.js'
import { readDirectory } from './directory.js'
import { FileProblem } from './files.js'

export { fileSchema } from './commands.js'
export { kinds } from './kinds/index.js'

const USAGE = `divinux: an organization's configuration as code

  divinux pull <dir>             write the organization's configuration to <dir>, one YAML file per kind
  divinux plan <dir> [--prune]   print what apply would do; exit 0 when nothing differs, 2 when something does
  divinux apply <dir> [--prune]  make the organization match the files; --prune deletes what they no longer name
  divinux schemas <dir>          write the files' JSON Schemas to <dir>
  divinux import-backstage <catalog-info.yaml>
                                 register the file's Backstage Components and Systems as services (again: no change)

The product API, the organization and the token come from --url, --org and --token, or from
DIVINUX_URL, DIVINUX_ORGANIZATION and DIVINUX_TOKEN (an organization API token, dvx_…).`

export interface Output {
  out: (line: string) => void
  err: (line: string) => void
}

/** Runs the command line `argv` (without node and the script); answers the exit status. */
export async function run(argv: string[], output: Output, env: Record<string, string | undefined> = process.env): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        prune: { type: 'boolean', default: false },
        url: { type: 'string' },
        org: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean' },
      },
    })
  } catch (error) {
    output.err(`${(error as Error).message}\n\n${USAGE}`)
    return 1
  }
  const [command, target, ...extra] = parsed.positionals
  if (
    parsed.values.help ||
    !command ||
    !target ||
    extra.length > 0 ||
    !['pull', 'plan', 'apply', 'schemas', 'import-backstage'].includes(command)
  ) {
    ;(parsed.values.help ? output.out : output.err)(USAGE)
    return parsed.values.help ? 0 : 1
  }
  if (command === 'schemas') {
    await writeSchemas(target)
    return 0
  }
  const url = parsed.values.url ?? env.DIVINUX_URL
  const orgId = parsed.values.org ?? env.DIVINUX_ORGANIZATION
  const token = parsed.values.token ?? env.DIVINUX_TOKEN
  const missing = [!url && '--url (DIVINUX_URL)', !orgId && '--org (DIVINUX_ORGANIZATION)', !token && '--token (DIVINUX_TOKEN)'].filter(
    Boolean,
  )
  if (missing.length > 0) {
    output.err(`missing ${missing.join(', ')}`)
    return 1
  }
  const connection = connect({ url: url!, token: token!, orgId: orgId! })
  const context = { connection, names: new Names(connection), say: output.out, env }
  try {
    if (command === 'pull') {
      await pull(context, target)
      return 0
    }
    if (command === 'import-backstage') {
      await importBackstage(context, target)
      return 0
    }
    const desired = await readDirectory(target)
    if (command === 'plan') return (await plan(context, desired, parsed.values.prune)) ? 2 : 0
    await apply(context, desired, parsed.values.prune)
    return 0
  } catch (error) {
    if (error instanceof FileProblem) output.err(`${error.message}\nnothing was changed`)
    else if (error instanceof Refusal)
      output.err(`refused: ${error.message}\nstopped there: what is printed above was done, nothing after it`)
    else output.err(`failed: ${(error as Error).message}`)
    return 1
  }
}
