import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { createTestDatabase, freePort, testServerUrl, workspaceRoot } from '@svc/testkit'

// No Docker engine runs here, so the image's runtime stage is checked through its file tree,
// built by the script the Dockerfile runs. A service on its own needs PostgreSQL, so this runs
// in the suite's PostgreSQL pass (which CI requires).
if (!testServerUrl()) {
  t.pass('the runtime tree starts a service on PostgreSQL: checked in the PostgreSQL pass')
  process.exit(0)
}
t.setTimeout(600_000)

const run = promisify(execFile)
const root = workspaceRoot()
const tree = await mkdtemp(path.join(tmpdir(), 'runtime-tree-'))
t.teardown(() => rm(tree, { recursive: true, force: true }))
// tap would add its loader and coverage to the children; the tree runs as the image runs it.
const clean = { ...process.env, NODE_OPTIONS: '', NODE_V8_COVERAGE: '' }
await run('scripts/build-runtime.sh', [tree], { cwd: root, env: clean, maxBuffer: 64 * 1024 * 1024 })

async function* filesUnder(folder: string): AsyncGenerator<string> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name)
    if (entry.isDirectory()) yield* filesUnder(full)
    else yield full
  }
}

const DEV_TOOLS = ['typescript', 'eslint', 'tap', 'autocannon', 'newman', 'tsx', 'prettier', 'kysely-codegen', '@svc+testkit']

t.test('the tree holds compiled services and production dependencies only', async (t) => {
  t.same((await readdir(tree)).sort(), ['healthcheck.mjs', 'platform', 'product', 'relay', 'service-entrypoint.sh'])
  for (const service of ['platform', 'product', 'relay']) {
    const store = await readdir(path.join(tree, service, 'node_modules', '.pnpm'))
    for (const tool of DEV_TOOLS) {
      t.notOk(
        store.some((entry) => entry === tool || entry.startsWith(`${tool}@`)),
        `${service}: no ${tool}`,
      )
    }
    const main = service === 'relay' ? 'main.js' : 'server.js'
    t.ok((await stat(path.join(tree, service, 'dist', main))).isFile(), `${service}: dist/${main}`)
  }
  // Our own packages ship dist only: no TypeScript sources, no tests.
  const ours: string[] = []
  for await (const file of filesUnder(path.join(tree, 'platform', 'node_modules', '.pnpm'))) {
    if (file.includes('/node_modules/@svc/')) ours.push(file)
  }
  t.ok(ours.length > 0, 'the workspace packages are there')
  t.same(
    ours.filter((file) => /\/(src|test)\//.test(file) || (file.endsWith('.ts') && !file.endsWith('.d.ts'))),
    [],
    'no sources or tests of ours',
  )
})

t.test('a service starts from the tree with node, answers its probes and stops on SIGTERM', async (t) => {
  const port = await freePort()
  const child = spawn(path.join(tree, 'service-entrypoint.sh'), ['platform'], {
    env: {
      ...clean,
      NODE_ENV: 'production',
      DATABASE_URL: await createTestDatabase(t),
      AUTH_ISSUER: 'https://idp.example.com',
      AUTH_CLIENT_ID: 'runtime-tree',
      PLATFORM_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(() => void child.kill('SIGKILL'))

  const deadline = Date.now() + 60_000
  let ready: Response | undefined
  while (!ready?.ok) {
    if (child.exitCode !== null) throw new Error(`the service exited early:\n${output}`)
    if (Date.now() > deadline) throw new Error(`the service did not come up:\n${output}`)
    ready = await fetch(`http://127.0.0.1:${port}/api/v1/health/ready`).catch(() => undefined)
    if (!ready?.ok) await new Promise((resolve) => setTimeout(resolve, 250))
  }
  t.equal(ready.status, 200, 'ready on PostgreSQL')

  const healthcheck = await run(process.execPath, [path.join(tree, 'healthcheck.mjs')], {
    env: { ...clean, PLATFORM_PORT: String(port), PRODUCT_PORT: '1' },
  }).then(
    () => 0,
    (error: { code?: number }) => error.code ?? 1,
  )
  t.equal(healthcheck, 0, 'the HEALTHCHECK command passes')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM closes it gracefully (exit 0)')
})
