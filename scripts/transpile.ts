/**
 * One TypeScript file transpiled by swc to an ES module beside its source map, the way both the
 * test build (scripts/test-build.ts) and the image's build (scripts/dist-build.ts) make
 * JavaScript. Transpiling only: `tsc --noEmit` checks the types, and the code relies on nothing
 * that needs the checker to emit (`isolatedModules` and `verbatimModuleSyntax` in
 * tsconfig.base.json).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { transformFile, type Options } from '@swc/core'

const swcOptions: Options = {
  jsc: {
    parser: { syntax: 'typescript' },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: true,
  inlineSourcesContent: false,
  swcrc: false,
  configFile: false,
}

/** Writes `target` with `.ts` turned into `.js`, and its map (naming the source relative to it). */
export async function transpileFile(source: string, target: string): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true })
  const output = await transformFile(source, { ...swcOptions, filename: source })
  const js = target.replace(/\.ts$/, '.js')
  const map = JSON.parse(output.map ?? '{}') as { sources?: string[] }
  map.sources = [path.relative(path.dirname(js), source)]
  await writeFile(js, `${output.code}\n//# sourceMappingURL=${path.basename(js)}.map\n`)
  await writeFile(`${js}.map`, JSON.stringify(map))
}
