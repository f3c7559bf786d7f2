import { existsSync } from 'node:fs'
import path from 'node:path'

/** Where each package's test build is (scripts/test-build.ts). */
export const TEST_BUILD_DIR = '.test-build'

/** True when the tests run from the test build, as `pnpm test` runs them. */
const FROM_TEST_BUILD = import.meta.dirname.split(path.sep).includes(TEST_BUILD_DIR)

/** Where the test build keeps a workspace file: `services/product/test/a.test.ts` → `services/product/.test-build/test/a.test.js`. */
export function builtPathOf(file: string): string {
  const segments = file.split('/')
  const packageDepth = ['packages', 'plugins', 'services'].includes(segments[0] ?? '') ? 2 : segments[0] === 'db' ? 1 : 0
  const rest = segments.slice(packageDepth).join('/').replace(/\.ts$/, '.js')
  return [...segments.slice(0, packageDepth), TEST_BUILD_DIR, rest].join('/')
}

/** The workspace file a built one came from: the inverse of `builtPathOf`. */
export function sourcePathOf(built: string): string {
  return built.replace(`${TEST_BUILD_DIR}/`, '').replace(/\.js$/, '.ts')
}

/** The workspace's root (where pnpm-workspace.yaml is), whether this runs from source or from the test build. */
export function workspaceRoot(): string {
  let folder = import.meta.dirname
  while (!existsSync(path.join(folder, 'pnpm-workspace.yaml'))) {
    const parent = path.dirname(folder)
    if (parent === folder) throw new Error(`no pnpm-workspace.yaml above ${import.meta.dirname}`)
    folder = parent
  }
  return folder
}

/**
 * Node's arguments to run a workspace entry point (`services/product/src/server.ts`) as a
 * process of its own: its test build when the tests run from it (as production runs compiled
 * JavaScript, and without paying a TypeScript loader's start), otherwise the source through tsx.
 */
export function entryPointArgs(entry: string): string[] {
  if (!FROM_TEST_BUILD) return ['--conditions=@svc/source', '--import', 'tsx', entry]
  return ['--enable-source-maps', '--conditions=@svc/test-build', builtPathOf(entry)]
}
