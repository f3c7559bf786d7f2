/**
 * The test build: every workspace package's TypeScript (`src`, `test` and the few other source
 * folders) transpiled once by swc into `<package>/.test-build/`, with source maps, so the suite's
 * processes run JavaScript with no loader. Loading the product service through tap's TypeScript
 * loader took 8.5 s of a process where the same code compiled took 4.6 s (docs/testing.md);
 * the suite starts about 300 processes. Packages resolve to it through the `@svc/test-build`
 * export condition (beside `@svc/source`), and coverage reads the source maps back to the
 * TypeScript, so the report names the same files as before.
 *
 * This is transpiling only (like tap's loader, `TS_NODE_TRANSPILE_ONLY`): types are checked by
 * `tsc --noEmit`, which `pnpm test` runs first.
 */
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { TEST_BUILD_DIR } from '@svc/testkit'
import { transpileFile } from './transpile.js'

/** Folders of a package that hold code a test may load; anything else (dist, node_modules) is not read. */
const SOURCE_FOLDERS = ['src', 'test', 'codegen', 'migrations', 'scripts']

/** The workspace's packages, as pnpm-workspace.yaml lists them, and the root (for `scripts`). */
async function packageRoots(root: string): Promise<string[]> {
  const roots = [root, path.join(root, 'db')]
  for (const group of ['packages', 'plugins', 'services']) {
    for (const entry of await readdir(path.join(root, group), { withFileTypes: true })) {
      if (entry.isDirectory()) roots.push(path.join(root, group, entry.name))
    }
  }
  return roots
}

async function* filesUnder(folder: string): AsyncGenerator<string> {
  let entries
  try {
    entries = await readdir(folder, { withFileTypes: true })
  } catch {
    return
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name === TEST_BUILD_DIR) continue
    const full = path.join(folder, entry.name)
    if (entry.isDirectory()) yield* filesUnder(full)
    else yield full
  }
}

/** The files of one package to build: its source folders, and for `db` its top-level modules. */
async function* packageFiles(packageRoot: string, isWorkspaceRoot: boolean): AsyncGenerator<string> {
  // At the root this is `scripts` only: `packages`, `plugins` and `services` hold packages of their own.
  for (const folder of SOURCE_FOLDERS) yield* filesUnder(path.join(packageRoot, folder))
  if (isWorkspaceRoot) return
  for (const entry of await readdir(packageRoot, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) yield path.join(packageRoot, entry.name)
  }
}

async function buildFile(source: string, target: string): Promise<void> {
  if (!source.endsWith('.ts') || source.endsWith('.d.ts')) {
    // Fixtures (keys, conformance collections) beside the tests, found through import.meta.url.
    if (source.endsWith('.d.ts')) return
    await mkdir(path.dirname(target), { recursive: true })
    await copyFile(source, target)
    return
  }
  await transpileFile(source, target)
}

export async function buildForTests(root: string): Promise<{ files: number }> {
  let files = 0
  for (const packageRoot of await packageRoots(root)) {
    const isWorkspaceRoot = packageRoot === root
    const out = path.join(packageRoot, TEST_BUILD_DIR)
    await rm(out, { recursive: true, force: true })
    const builds: Promise<void>[] = []
    for await (const source of packageFiles(packageRoot, isWorkspaceRoot)) {
      builds.push(buildFile(source, path.join(out, path.relative(packageRoot, source))))
    }
    await Promise.all(builds)
    files += builds.length
  }
  return { files }
}
