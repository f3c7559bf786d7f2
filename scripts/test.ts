// `pnpm test`: everything CI checks: lint, formatting, typecheck and generated-types freshness
// (side by side), the test build, then the whole suite on real PostgreSQL with the coverage floor
// (TEST_DATABASE_URL, or the server on 127.0.0.1:5432) and on PGlite the files that can differ
// there (scripts/engine-split.ts). Without a server the whole suite runs on PGlite instead; with
// CI=true a missing server fails the run. It ends with the ten slowest files and the totals.
import { spawn } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { builtPathOf, localPostgresReachable, sourcePathOf } from '@svc/testkit'
import { PGLITE_FILES } from './engine-split.js'
import { postgresPass } from './postgres-pass.js'
import { type Failure, failuresOf } from './test-failures.js'
import { buildForTests } from './test-build.js'
import { testFilesOf } from './test-files.js'

interface Counts {
  passed: number
  failed: number
}

/** Runs a command; its output goes to ours as it comes, or is only answered when `quiet`. */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  quiet = false,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', quiet ? 'pipe' : 'inherit'] })
    let output = ''
    const take = (chunk: Buffer) => {
      output += chunk.toString()
      if (!quiet) process.stdout.write(chunk)
    }
    child.stdout?.on('data', take)
    child.stderr?.on('data', take)
    child.once('exit', (code) => resolve({ code: code ?? 1, output }))
  })
}

/** Each step's wall time, printed at the end beside the slowest files. */
const stepTimes: Array<{ title: string; seconds: number }> = []

async function timed<T>(title: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now()
  try {
    return await work()
  } finally {
    stepTimes.push({ title, seconds: (performance.now() - started) / 1000 })
  }
}

interface Step {
  title: string
  command: string
  args: string[]
}

/**
 * Steps in lanes that run side by side, each lane's steps one after the other; a step's output is
 * printed whole when it ends, so lanes do not interleave. Every lane runs to its end (or its
 * first failure), so one run reports a lint error and a type error together; then a failure
 * stops the run.
 */
async function lanes(...groups: Step[][]): Promise<void> {
  const failed: string[] = []
  await Promise.all(
    groups.map(async (group) => {
      for (const { title, command, args } of group) {
        const { code, output } = await timed(title, () => run(command, args, process.env, true))
        console.log(`\n▶ ${title}\n${output.trimEnd()}`)
        if (code !== 0) {
          console.error(`✗ ${title} failed`)
          failed.push(title)
          return
        }
      }
    }),
  )
  if (failed.length > 0) process.exit(1)
}

/** tap's last line reads `# { total: 297, pass: 296, fail: 1, skip: 0 }`. */
function countsOf(output: string): Counts {
  const summary = [...output.matchAll(/# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?/g)].at(-1)
  if (!summary) return { passed: 0, failed: 1 }
  return { passed: Number(summary[2] ?? 0), failed: Number(summary[3] ?? 0) }
}

interface FileTime {
  file: string
  pass: string
  seconds: number
}

/** How long each test file's process ran, start to exit, as tap's process records (`.tap/processinfo`) keep it. */
async function fileTimes(pass: string): Promise<FileTime[]> {
  const folder = '.tap/processinfo'
  const times: FileTime[] = []
  for (const name of await readdir(folder)) {
    const info = JSON.parse(await readFile(path.join(folder, name), 'utf8')) as {
      parent: string | null
      externalID?: string
      runtime?: number
    }
    if (info.parent !== null || !info.externalID || info.runtime === undefined) continue
    times.push({ file: sourcePathOf(info.externalID), pass, seconds: info.runtime / 1000 })
  }
  return times
}

const times: FileTime[] = []

const failures: Failure[] = []

/** One tap run over the built files (`.taprc`: plain Node, no TypeScript loader). */
async function suite(title: string, pass: string, files: string[], args: string[], env: NodeJS.ProcessEnv): Promise<Counts> {
  console.log(`\n▶ ${title}: ${files.length} files`)
  const { code, output } = await timed(title, () => run('tap', [...args, ...files.map(builtPathOf)], env))
  const counts = countsOf(output)
  if (code !== 0 && counts.failed === 0) counts.failed = 1
  times.push(...(await fileTimes(pass)))
  failures.push(...(await failuresOf(output, pass, '.tap/test-results')))
  return counts
}

async function checkCoverageFloor(): Promise<boolean> {
  const floor = JSON.parse(await readFile(new URL('coverage-floor.json', import.meta.url), 'utf8')) as Record<string, number>
  const summary = JSON.parse(await readFile('.tap/report/coverage-summary.json', 'utf8')) as {
    total: Record<string, { pct: number }>
  }
  let ok = true
  for (const [metric, minimum] of Object.entries(floor)) {
    const actual = summary.total[metric]?.pct ?? 0
    if (actual < minimum) {
      console.error(`✗ ${metric} coverage ${actual}% is below the floor of ${minimum}% (scripts/coverage-floor.json)`)
      ok = false
    }
  }
  if (ok) console.log('coverage is at or above the floor in scripts/coverage-floor.json')
  return ok
}

// The type check takes a core for about a minute; lint, formatting, the generated types and the
// builds take the other (each of them is single-threaded), so the checks cost the longest lane.
await lanes(
  [{ title: 'typecheck', command: 'tsc', args: ['--noEmit'] }],
  [
    { title: 'lint', command: 'eslint', args: ['.'] },
    { title: 'formatting (Prettier)', command: 'prettier', args: ['--check', '.'] },
    { title: 'generated database types are fresh', command: 'tsx', args: ['--conditions=@svc/source', 'scripts/codegen.ts', '--check'] },
    // tap rebuilds its test class when `.taprc`'s plugins differ from the installed ones, but a
    // run that finds the difference has already handed its test processes the old loaders (the
    // TypeScript one among them): on a clean install the first pass would pay for them.
    { title: 'tap built with the plugins `.taprc` names', command: 'tap', args: ['build'] },
  ],
)

console.log('\n▶ test build (swc, into each package’s .test-build)')
const built = await timed('test build', () => buildForTests(process.cwd()))
console.log(`${built.files} files built`)

const { TEST_DATABASE_URL: _ignored, ...pgliteEnv } = process.env
const totals: Counts = { passed: 0, failed: 0 }
const add = (counts: Counts) => {
  totals.passed += counts.passed
  totals.failed += counts.failed
}
const everyFile = await testFilesOf(process.cwd())
const pgliteFiles = everyFile.filter((file) => file in PGLITE_FILES)

let coverageOk: boolean
const pass = postgresPass(process.env, await localPostgresReachable())
if ('run' in pass) {
  const host = new URL(pass.run).host
  add(
    await suite(`tests on PostgreSQL (${host}), every file, with coverage`, 'PostgreSQL', everyFile, [], {
      ...process.env,
      TEST_DATABASE_URL: pass.run,
    }),
  )
  coverageOk = await checkCoverageFloor()
  add(
    await suite(
      'tests on PGlite (embedded PostgreSQL), the files that can differ there',
      'PGlite',
      pgliteFiles,
      ['--disable-coverage'],
      pgliteEnv,
    ),
  )
} else {
  if ('fail' in pass) {
    console.error(`\n✗ ${pass.fail}`)
    totals.failed += 1
  } else {
    console.log(`\n${pass.skip}: every file runs on PGlite instead`)
  }
  add(await suite('tests on PGlite (embedded PostgreSQL), every file, with coverage', 'PGlite', everyFile, [], pgliteEnv))
  coverageOk = await checkCoverageFloor()
}

console.log('\nthe ten slowest test files (process start to exit):')
for (const { file, pass: engine, seconds } of times.sort((a, b) => b.seconds - a.seconds).slice(0, 10)) {
  console.log(`${seconds.toFixed(1).padStart(7)} s  ${file} (${engine})`)
}

console.log('\nsteps (wall time):')
for (const { title, seconds } of stepTimes) console.log(`${seconds.toFixed(1).padStart(7)} s  ${title}`)

if (failures.length > 0) {
  console.log('\nfailed:')
  for (const { file, pass: engine, tests } of failures) {
    console.log(`  ${file} (${engine})`)
    for (const test of tests) console.log(`    ✗ ${test}`)
  }
}

console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed`)
process.exit(totals.failed === 0 && coverageOk ? 0 : 1)
