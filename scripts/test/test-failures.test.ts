import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { failuresOf } from '../test-failures.js'

// What tap 21 printed and kept for two files, one failing (a failed assertion inside a subtest, and
// one directly in its parent) and one passing.
const topLevelOutput = `TAP version 14
1..2
# Subtest: services/product/.test-build/test/failing.test.js
    # Subtest: outer
    not ok 1 - outer # time=62.886ms

    1..2
not ok 1 - services/product/.test-build/test/failing.test.js # time=97.9ms
# Subtest: services/product/.test-build/test/passing.test.js
    ok 1 - ok # time=8.485ms
ok 2 - services/product/.test-build/test/passing.test.js # time=26.117ms
`

t.test('the end of a run names each failed file and its innermost failures, with where they are', async (t) => {
  const results = await mkdtemp(path.join(tmpdir(), 'tap-results-'))
  t.teardown(() => rm(results, { recursive: true, force: true }))
  const folder = path.join(results, 'services/product/.test-build/test')
  await mkdir(folder, { recursive: true })
  for (const name of ['failing', 'passing']) {
    await copyFile(new URL(`fixtures/tap-results/${name}.test.js.tap`, import.meta.url), path.join(folder, `${name}.test.js.tap`))
  }

  t.same(await failuresOf(topLevelOutput, 'PostgreSQL', results), [
    {
      file: 'services/product/test/failing.test.ts',
      pass: 'PostgreSQL',
      tests: [
        'outer › inner fails › one is two (services/product/test/failing.test.ts:4)',
        'outer › direct assertion (services/product/test/failing.test.ts:5)',
      ],
    },
  ])
})

t.test('a file that failed without a result of its own (killed, timed out) is still named', async (t) => {
  const results = await mkdtemp(path.join(tmpdir(), 'tap-results-'))
  t.teardown(() => rm(results, { recursive: true, force: true }))
  t.same(await failuresOf('not ok 3 - .test-build/scripts/test/gone.test.js # time=120000ms\n', 'PGlite', results), [
    { file: 'scripts/test/gone.test.ts', pass: 'PGlite', tests: [] },
  ])
})
