// `pnpm test`: everything CI checks, in order: lint, typecheck, generated-types freshness,
// the suite on PGlite (with the coverage floor), then the suite on real PostgreSQL when a
// server is reachable (TEST_DATABASE_URL, or the local one on 127.0.0.1:5432). With CI=true
// an unreachable server fails the run instead of skipping the pass.
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { localPostgresReachable } from '@svc/testkit'
import { postgresPass } from './postgres-pass.js'

interface Counts {
  passed: number
  failed: number
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      process.stdout.write(chunk)
    })
    child.once('exit', (code) => resolve({ code: code ?? 1, output }))
  })
}

async function step(title: string, command: string, args: string[]): Promise<void> {
  console.log(`\n▶ ${title}`)
  const { code } = await run(command, args)
  if (code !== 0) {
    console.error(`✗ ${title} failed`)
    process.exit(code)
  }
}

/** tap's last line reads `# { total: 297, pass: 296, fail: 1, skip: 0 }`. */
function countsOf(output: string): Counts {
  const summary = [...output.matchAll(/# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?/g)].at(-1)
  if (!summary) return { passed: 0, failed: 1 }
  return { passed: Number(summary[2] ?? 0), failed: Number(summary[3] ?? 0) }
}

async function suite(title: string, args: string[], env: NodeJS.ProcessEnv): Promise<Counts> {
  console.log(`\n▶ ${title}`)
  const { code, output } = await run('tap', args, env)
  const counts = countsOf(output)
  if (code !== 0 && counts.failed === 0) counts.failed = 1
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

await step('lint', 'eslint', ['.'])
await step('formatting (Prettier)', 'prettier', ['--check', '.'])
await step('typecheck', 'tsc', ['--noEmit'])
await step('generated database types are fresh', 'tsx', ['--conditions=@svc/source', 'scripts/codegen.ts', '--check'])

const { TEST_DATABASE_URL: _ignored, ...pgliteEnv } = process.env
const totals: Counts = { passed: 0, failed: 0 }
const add = (counts: Counts) => {
  totals.passed += counts.passed
  totals.failed += counts.failed
}

add(await suite('tests on PGlite (embedded PostgreSQL)', [], pgliteEnv))
const coverageOk = await checkCoverageFloor()

const pass = postgresPass(process.env, await localPostgresReachable())
if ('run' in pass) {
  add(
    await suite(`tests on PostgreSQL (${new URL(pass.run).host})`, ['--disable-coverage'], { ...process.env, TEST_DATABASE_URL: pass.run }),
  )
} else if ('fail' in pass) {
  console.error(`\n✗ ${pass.fail}`)
  totals.failed += 1
} else {
  console.log(`\n${pass.skip}`)
}

console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed`)
process.exit(totals.failed === 0 && coverageOk ? 0 : 1)
