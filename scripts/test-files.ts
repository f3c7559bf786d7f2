/**
 * The suite's test files, and the rule that says which of them touch the database engine
 * (scripts/engine-split.ts lists those, and the PGlite pass runs them).
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import ts from 'typescript'

/** The folders whose subfolders are surfaces: each needs an end-to-end path on PGlite. */
export const SURFACES_ROOTS = ['plugins', 'services']

/** Folders of tests that are about the engine as a whole. */
const ENGINE_PATHS: Record<string, string> = {
  'packages/db/test/': 'the database package',
  'packages/jobs/test/': 'the job queue',
  'db/': 'the migrations',
  'scripts/test/embedded-start.test.ts': 'the embedded start',
}

/** Modules whose every import reaches below the service: drivers, the queue, the migrations. */
const ENGINE_MODULES = [/^pg$/, /^pg-boss$/, /^pg-protocol(\/|$)/, /^@electric-sql\/pglite(\/|$)/, /^@svc\/jobs$/, /^@svc\/migrations$/]

/** Names that open or shape a database directly; everything else these modules export is SQL or types. */
const ENGINE_NAMES: Record<string, ReadonlySet<string>> = {
  '@svc/db': new Set(['openDatabase', 'migrateToLatest', 'dumpEmbedded', 'PGlitePool', 'ChangeNotices', 'keptAnswers', 'STATEMENTS_KEPT']),
  '@svc/testkit': new Set(['embeddedSnapshot', 'buildEmbeddedSnapshot', 'createTestDatabase']),
}

/** Every `*.test.ts` under a `test` folder, as a path from the workspace's root. */
export async function testFilesOf(root: string): Promise<string[]> {
  const found: string[] = []
  const walk = async (folder: string, inTests: boolean): Promise<void> => {
    for (const entry of await readdir(path.join(root, folder), { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules' || entry.name === 'dist') continue
      const relative = folder ? `${folder}/${entry.name}` : entry.name
      if (entry.isDirectory()) await walk(relative, inTests || entry.name === 'test')
      else if (inTests && entry.name.endsWith('.test.ts')) found.push(relative)
    }
  }
  await walk('', false)
  return found.sort()
}

/** What in a test file reaches the engine below the service; empty when nothing does. */
export function engineUses(file: string, source: ts.SourceFile): string[] {
  const uses = Object.entries(ENGINE_PATHS).flatMap(([prefix, what]) => (file.startsWith(prefix) ? [what] : []))
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && !node.importClause?.isTypeOnly) {
      const module = node.moduleSpecifier.text
      if (ENGINE_MODULES.some((pattern) => pattern.test(module))) uses.push(module)
      const names = ENGINE_NAMES[module]
      const bindings = node.importClause?.namedBindings
      if (names && bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) {
          const name = (element.propertyName ?? element.name).text
          if (!element.isTypeOnly && names.has(name)) uses.push(`${name} from ${module}`)
        }
      }
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments
      if (specifier && ts.isStringLiteral(specifier) && ENGINE_MODULES.some((pattern) => pattern.test(specifier.text)))
        uses.push(specifier.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return uses
}
