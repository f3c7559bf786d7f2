import { existsSync } from 'node:fs'
import path from 'node:path'

/** True when the tests run from the test build (scripts/test-build.ts), as `pnpm test` runs them. */
const FROM_TEST_BUILD = import.meta.dirname.split(path.sep).includes('.test-build')

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
  const segments = entry.split('/')
  const packageDepth = ['packages', 'plugins', 'services'].includes(segments[0] ?? '') ? 2 : 0
  const built = [...segments.slice(0, packageDepth), '.test-build', ...segments.slice(packageDepth)].join('/').replace(/\.ts$/, '.js')
  return ['--enable-source-maps', '--conditions=@svc/test-build', built]
}
