/**
 * The image's build: every package that `tsconfig.build.json` references, its `include` (under
 * its `rootDir`) transpiled by swc into its `outDir` (`dist`), JavaScript and source maps only.
 * `scripts/build-runtime.sh` runs it before deploying each service.
 *
 * Why not `pnpm build` (`tsc -b`): it checks every type again, which CI's typecheck has already
 * done before any image is built, and it took 68 s alone on the 2-core machine (up to 230 s
 * beside the suite) where this takes a few seconds; the image needs no declarations. The code
 * relies on nothing that needs the checker to emit (`isolatedModules`, `verbatimModuleSyntax`),
 * and the whole test suite runs the same transpiler's output (decision 0013).
 *   usage: tsx scripts/dist-build.ts
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { transpileFile } from './transpile.js'

interface BuildConfig {
  compilerOptions: { rootDir: string; outDir: string }
  include: string[]
}

async function* typeScriptUnder(entry: string): AsyncGenerator<string> {
  if (!(await stat(entry)).isDirectory()) {
    if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) yield entry
    return
  }
  for (const child of await readdir(entry)) yield* typeScriptUnder(path.join(entry, child))
}

/** Builds one package from its `tsconfig.build.json`; returns how many files it wrote. */
async function buildPackage(configPath: string): Promise<number> {
  const packageRoot = path.dirname(configPath)
  const config = JSON.parse(await readFile(configPath, 'utf8')) as BuildConfig
  const rootDir = path.join(packageRoot, config.compilerOptions.rootDir)
  const outDir = path.join(packageRoot, config.compilerOptions.outDir)
  // A clean output: nothing left from an earlier build (tsc's declarations and build info included).
  await rm(outDir, { recursive: true, force: true })
  const builds: Promise<void>[] = []
  for (const included of config.include) {
    for await (const source of typeScriptUnder(path.join(packageRoot, included))) {
      builds.push(transpileFile(source, path.join(outDir, path.relative(rootDir, source))))
    }
  }
  await Promise.all(builds)
  return builds.length
}

const root = path.resolve(import.meta.dirname, '..')
const workspace = JSON.parse(await readFile(path.join(root, 'tsconfig.build.json'), 'utf8')) as { references: Array<{ path: string }> }
const counts = await Promise.all(workspace.references.map((reference) => buildPackage(path.join(root, reference.path))))
console.log(`${counts.reduce((sum, count) => sum + count, 0)} files of ${counts.length} packages transpiled into dist`)
