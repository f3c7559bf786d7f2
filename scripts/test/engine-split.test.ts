import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { workspaceRoot } from '@svc/testkit'
import { PGLITE_FILES } from '../engine-split.js'
import { engineUses, SURFACES_ROOTS, testFilesOf } from '../test-files.js'

const root = workspaceRoot()
const testFiles = await testFilesOf(root)

t.test('every file in the PGlite set is a test file that exists', async (t) => {
  for (const file of Object.keys(PGLITE_FILES)) t.ok(testFiles.includes(file), `${file} is a test file`)
})

t.test('every test file that touches the engine runs on PGlite too', async (t) => {
  for (const file of testFiles) {
    const text = await readFile(path.join(root, file), 'utf8')
    const uses = engineUses(file, ts.createSourceFile(file, text, ts.ScriptTarget.ES2022))
    if (uses.length === 0) continue
    t.ok(file in PGLITE_FILES, `${file} uses ${uses.join(', ')}: list it in scripts/engine-split.ts`)
  }
})

t.test('every surface has an end-to-end path on PGlite', async (t) => {
  const surfaces = new Set(Object.values(PGLITE_FILES).flatMap((entry) => (entry.surface ? [entry.surface] : [])))
  for (const folder of SURFACES_ROOTS) {
    for (const entry of await readdir(path.join(root, folder), { withFileTypes: true })) {
      if (entry.isDirectory()) t.ok(surfaces.has(entry.name), `${folder}/${entry.name} has a file with surface '${entry.name}'`)
    }
  }
})

t.test('the rule sees what it is meant to see', async (t) => {
  const uses = (file: string, text: string) => engineUses(file, ts.createSourceFile(file, text, ts.ScriptTarget.ES2022))
  t.same(uses('x/test/a.test.ts', `import pg from 'pg'`), ['pg'])
  t.same(uses('x/test/a.test.ts', `import { PGlite } from '@electric-sql/pglite/worker'`), ['@electric-sql/pglite/worker'])
  t.same(uses('x/test/a.test.ts', `import { openDatabase, sql } from '@svc/db'`), ['openDatabase from @svc/db'])
  t.same(uses('x/test/a.test.ts', `import { monthlyPartitions, type DB } from '@svc/db'`), [])
  t.same(uses('x/test/a.test.ts', `import { startTestService, embeddedSnapshot } from '@svc/testkit'`), [
    'embeddedSnapshot from @svc/testkit',
  ])
  t.same(uses('x/test/a.test.ts', `const { createJobQueue } = await import('@svc/jobs')`), ['@svc/jobs'])
  t.same(uses('packages/db/test/a.test.ts', `import t from 'tap'`), ['the database package'])
  t.same(uses('scripts/test/embedded-start.test.ts', `import t from 'tap'`), ['the embedded start'])
  t.same(uses('packages/jobs/test/b.test.ts', `import t from 'tap'`), ['the job queue'])
})
