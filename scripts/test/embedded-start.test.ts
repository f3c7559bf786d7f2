import { spawn, execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { freePort, testServerUrl, workspaceRoot } from '@svc/testkit'

// The front door, as a newcomer uses it: `pnpm start`, `pnpm token`, curl. This exercises
// the embedded default itself, so the PostgreSQL pass of the suite has nothing to add.
if (testServerUrl()) {
  t.pass('the embedded default is exercised in the PGlite pass')
  process.exit(0)
}

// Two starts of both services through tsx, the first migrating a new data directory: about
// 100 s alone on this machine, beside another test file more; tap's 120 s would be too close.
t.setTimeout(300_000)

const run = promisify(execFile)
const root = workspaceRoot()
const dataDir = await mkdtemp(path.join(tmpdir(), 'embedded-start-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))
const [platformPort, productPort, idpPort] = [await freePort(), await freePort(), await freePort()]
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PLATFORM_PORT: String(platformPort),
  PRODUCT_PORT: String(productPort),
  DEV_IDP_PORT: String(idpPort),
  // Not the checkout's .dev-system.json: a developer's own pnpm start may be announced there.
  DEV_SYSTEM_FILE: path.join(dataDir, 'dev-system.json'),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  DATABASE_URL: '',
  AUTH_ISSUER: '',
}

// The children are black boxes started as a newcomer starts them, without tap's loaders.
// tap re-adds its loader to every child it sees spawned, and would record their coverage of
// sources transpiled another way; merged, that blanks out lines the suite covered. A shell
// in between drops the loader before node starts.
const node = (args: string[]): [string, string[]] => [
  '/bin/sh',
  ['-c', 'unset NODE_OPTIONS NODE_V8_COVERAGE; exec "$0" "$@"', process.execPath, '--conditions=@svc/source', '--import', 'tsx', ...args],
]

async function start(extra: Record<string, string> = {}) {
  const child = spawn(...node(['scripts/start.ts']), { cwd: root, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pnpm start exited early:\n${output}`)
    const up = await Promise.all(
      [platformPort, productPort].map((port) =>
        fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    )
    if (up.every(Boolean)) break
    if (Date.now() > deadline) throw new Error(`pnpm start did not come up:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return { child, exited, output: () => output }
}

async function token(email: string): Promise<string> {
  const { stdout } = await run(...node(['scripts/token.ts', email]), { cwd: root, env })
  return stdout.trim()
}

t.test('pnpm start brings both services up on the embedded default, and pnpm token works against it', async (t) => {
  const system = await start()
  const idToken = await token('newcomer@example.com')
  const profile = await fetch(`http://127.0.0.1:${platformPort}/api/v1/users/me`, { headers: { authorization: `Bearer ${idToken}` } })
  t.equal(profile.status, 200)
  const body = (await profile.json()) as { userId: string; email: string }
  t.equal(body.email, 'newcomer@example.com')
  const product = await fetch(`http://127.0.0.1:${productPort}/auth/me`, { headers: { authorization: `Bearer ${idToken}` } })
  t.equal(product.status, 200)
  t.equal(((await product.json()) as { userId: string }).userId, body.userId, 'one identity on both services')

  // Another terminal, without this test's settings, finds the running system by itself.
  const { DATA_DIR: _dataDir, PLATFORM_PORT: _platform, PRODUCT_PORT: _product, DEV_IDP_PORT: _idp, ...plainShell } = env
  const { stdout: found } = await run(...node(['scripts/token.ts', 'newcomer@example.com']), { cwd: root, env: plainShell })
  const foundProfile = await fetch(`http://127.0.0.1:${platformPort}/api/v1/users/me`, {
    headers: { authorization: `Bearer ${found.trim()}` },
  })
  t.equal(foundProfile.status, 200, 'pnpm token signs as the running system’s identity provider')

  // It says where everything is, once it is.
  t.match(system.output(), /Opening the embedded PostgreSQL in .+ and bringing it up to date/)
  t.match(system.output(), new RegExp(`platform API +http://localhost:${platformPort} +reference http://localhost:${platformPort}/docs`))
  t.match(system.output(), new RegExp(`product API +http://localhost:${productPort}`))
  t.match(system.output(), /checks and webhooks may target this machine and private networks/)

  // Its outbound requests may reach this machine: a newcomer's first webhook does.
  const headers = { authorization: `Bearer ${idToken}`, 'content-type': 'application/json' }
  const organization = await fetch(`http://127.0.0.1:${platformPort}/api/v1/organizations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'First hour', slug: 'first-hour' }),
  })
  t.equal(organization.status, 201)
  const orgId = ((await organization.json()) as { id: string }).id
  const page = await fetch(`http://127.0.0.1:${productPort}/api/v1/statuspages/organizations/${orgId}/pages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'First', slug: 'first-hour', published: true }),
  })
  t.equal(page.status, 201)
  const hook = await fetch(`http://127.0.0.1:${productPort}/api/v1/statuspages/public/first-hour/subscribers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${platformPort}/hook` }),
  })
  t.equal(hook.status, 201, 'a loopback webhook is taken')

  // Without an e-mail provider, what would be sent is captured and can be read: on the console,
  // on the development outbox page, and with `pnpm outbox`, which asks the running system.
  const subscribed = await fetch(`http://127.0.0.1:${productPort}/api/v1/statuspages/public/first-hour/subscribers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'reader@example.com' }),
  })
  t.equal(subscribed.status, 202)
  const line = new RegExp(
    `captured e-mail to reader@example\\.com “Confirm your subscription to First status updates” \\([\\w-]+\\): http://localhost:${platformPort}/dev/outbox`,
  )
  for (let waited = 0; !line.test(system.output()) && waited < 20_000; waited += 200)
    await new Promise((resolve) => setTimeout(resolve, 200))
  t.match(system.output(), line, 'one readable line on the console')
  const outbox = (await (await fetch(`http://127.0.0.1:${platformPort}/dev/outbox.json?status=captured`)).json()) as {
    data: Array<{ recipient: string; status: string; text: string }>
  }
  t.match(outbox.data[0], { recipient: 'reader@example.com', status: 'captured', text: /subscribers\/confirm\?token=/ })
  const html = await fetch(`http://127.0.0.1:${platformPort}/dev/outbox`)
  t.match(await html.text(), /email to reader@example\.com: Confirm your subscription/)
  const { stdout: listed } = await run(...node(['scripts/outbox.ts', '--status', 'captured']), { cwd: root, env })
  t.match(listed, /captured\s+email statuspage\.subscription_confirmation → reader@example\.com/)
  t.match(listed, /\| Confirm the subscription: http/)

  // `pnpm demo` seeds the running system through its APIs and says where to look.
  const { stdout: seeded } = await run(...node(['scripts/demo.ts']), { cwd: root, env: plainShell })
  t.match(seeded, /^Seeded\. Where to look:/m)
  const statusPage = /the status page +(\S+)/.exec(seeded)?.[1]
  t.equal((await fetch(statusPage!.replace('localhost', '127.0.0.1'))).status, 200, 'its status page is published')
  t.match(seeded, /the incident +INC-1: /, 'its alert opened an incident')
  const owner = /Sign in as (\S+) \(owner\)/.exec(seeded)?.[1]
  const { stdout: ownerToken } = await run(...node(['scripts/token.ts', owner!]), { cwd: root, env: plainShell })
  const results = /the check's results +curl -s (\S+)/.exec(seeded)?.[1]
  const checked = await fetch(results!.replace('localhost', '127.0.0.1'), { headers: { authorization: `Bearer ${ownerToken.trim()}` } })
  t.match(await checked.json(), { data: [{ status: 'passing', statusCode: 200 }] }, 'its check ran against the platform’s health')
  const pages = (await (await fetch(`http://127.0.0.1:${platformPort}/dev/outbox.json?status=captured`)).json()) as {
    data: Array<{ kind: string; subject: string | null }>
  }
  t.ok(
    pages.data.some((message) => message.kind === 'alert.page' && message.subject === '[P2] Checkout error rate above 5%'),
    'its alert paged someone, captured',
  )

  // docs/quickstart.md, run as written (but for the ports) in another terminal.
  const quickstart = [...(await readFile(path.join(root, 'docs/quickstart.md'), 'utf8')).matchAll(/```sh\n([\s\S]*?)```/g)]
    .slice(1)
    .map((block) => block[1])
    .join('\n')
    .replace('PLATFORM=localhost:3004', `PLATFORM=127.0.0.1:${platformPort}`)
    .replace('PRODUCT=localhost:3003', `PRODUCT=127.0.0.1:${productPort}`)
    .replace('127.0.0.1:3004/api/v1/health', `127.0.0.1:${platformPort}/api/v1/health`)
  const { stdout: walked } = await run('/bin/sh', ['-c', 'unset NODE_OPTIONS NODE_V8_COVERAGE; exec bash -ec "$0"', quickstart], {
    cwd: root,
    env: plainShell,
  })
  // One incident walked from its first alert to its RCA, each hand-off seen as the reader sees it.
  t.match(walked, /^you are [0-9a-f-]{36} in organization [0-9a-f-]{36}$/m, 'the quickstart: an organization')
  t.match(walked, /"status":\{"indicator":"none","description":"All Systems Operational"\}/, 'a status page, green')
  t.match(walked, /"channel":"email","recipient":"ada@example\.com"/, 'the alert pages')
  t.match(
    walked,
    /captured +email alert\.page → ada@example\.com[\s\S]*?\| Incident: INC-1 "Checkout error rate above 5%"/,
    'the page names its incident',
  )
  t.match(walked, /\| Runbook: https:\/\/runbooks\.example\.com\/checkout/, 'and the runbook')
  t.match(walked, /^acknowledged: HTTP 200$/m, 'acknowledged from the link')
  t.match(walked, /"reference":"INC-1"[^\n]*"status":"investigating"[^\n]*"acknowledgedAt":"[^"]+"/, 'the incident acknowledged with it')
  t.match(walked, /"status":\{"indicator":"major","description":"Partial System Outage"\}/, 'the status page red')
  t.match(walked, /"name":"Partial outage affecting Checkout"/, 'named for the public')
  t.match(walked, /^Likely caused by the deploy 2\.4\.0 of checkout \(commit 9f8e7d6c5b4a\)/m, 'the analysis of the incident')
  t.match(walked, /captured +email alert\.resolved → ada@example\.com[\s\S]*?by its source \(generic\)/, 'whoever was paged told')
  const green = walked.split('"indicator":"none","description":"All Systems Operational"').length - 1
  t.equal(green, 2, 'the status page green again once the incident resolved')
  t.match(walked, /^One incident on checkout: INC-1 "Checkout error rate above 5%" \(SEV2\)/m, 'the RCA draft names INC-1')
  t.match(walked, /^The deploy 2\.4\.0 of checkout \(commit 9f8e7d6c5b4a\) to production finished 10 minutes before/m, 'and the deploy')
  t.match(walked, /^- \S+ INC-1: paged \(ada@example\.com/m, 'who was paged')
  t.match(walked, /^- \S+ INC-1: alert acknowledged \(ada@example\.com\)$/m, 'who acknowledged')
  // The row ends with its response times, then its type and custom fields (none here).
  const reported = /^INC-1,[^\n]*,(\d+),\d+,,\r?\n(\d+)$/m.exec(walked)
  t.ok(reported, 'a report of incidents, then the incident’s own MTTA')
  t.equal(reported?.[1], reported?.[2], 'the report’s MTTA is the incident’s')
  t.match(walked, /"data":\[\{"id":"[^"]+","region":"local"[^\]]*"status":"passing"/, 'a check result')

  // A second copy is told which ports are taken and what moves them, in one line.
  const second = spawn(...node(['scripts/start.ts']), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let said = ''
  second.stderr.on('data', (chunk) => (said += chunk))
  const code = await new Promise<number | null>((resolve) => second.once('exit', resolve))
  t.equal(code, 1)
  t.equal(
    said.trim(),
    `ports ${platformPort} (PLATFORM_PORT), ${productPort} (PRODUCT_PORT) already in use on 127.0.0.1: another copy may be running (stop it), or set PLATFORM_PORT, PRODUCT_PORT to free ports`,
  )

  system.child.kill('SIGTERM')
  t.equal(await system.exited, 0, 'SIGTERM shuts down cleanly')

  // The data lives under DATA_DIR: after a restart the same token is the same user. Read by a
  // person (LOG_FORMAT=pretty, the default on a terminal), the log is a line per request.
  const again = await start({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' })
  const after = await fetch(`http://127.0.0.1:${platformPort}/api/v1/users/me`, { headers: { authorization: `Bearer ${idToken}` } })
  t.equal(((await after.json()) as { userId: string }).userId, body.userId)
  const requestLine = /^\[\d\d:\d\d:\d\d(\.\d+)?\] INFO.*GET \/api\/v1\/users\/me 200/m
  for (let waited = 0; !requestLine.test(again.output()) && waited < 5_000; waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100))
  t.match(again.output(), requestLine, 'one readable line for the request')
  t.notMatch(again.output(), /incoming request/, 'not two')
  again.child.kill('SIGINT')
  t.equal(await again.exited, 0, 'SIGINT too')
  t.notOk(existsSync(env.DEV_SYSTEM_FILE), 'a stopped system is not announced any more')
})
