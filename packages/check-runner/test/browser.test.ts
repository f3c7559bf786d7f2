import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { CHROMIUM, chromiumPresent, shopScript, startShop, workspaceRoot } from '@svc/testkit'
import { runBrowser, type BrowserStep } from '../src/index.js'

// Browser checks (issue 59): a Playwright script signs in to a small web app on loopback and
// places an order, in Debian's Chromium, from a process that can read no file of the runner's
// and import nothing. The app's button breaks: the run fails, names the failed expectation, and
// keeps a screenshot, the console error and the failed request; mended, it passes again.
if (await chromiumPresent(t, 'the browser check runner')) {
  const options = { executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] }
  const allowed = { allowPrivateTargets: true }
  const shop = await startShop(t.teardown)
  const app = shop.url
  const script = shopScript(app)
  const screenshots = path.join(workspaceRoot(), '.tap/screenshots')
  await mkdir(screenshots, { recursive: true })
  type Details = {
    steps: BrowserStep[]
    consoleErrors: string[]
    failedRequests: Array<{ url: string; status?: number; failure?: string }>
    vitals: Record<string, number>
    url: string
  }

  t.test('a script signs in and places an order; each step is timed', async (t) => {
    const run = await runBrowser({ script }, 20_000, allowed, options)
    t.equal(run.error, undefined, run.error ?? 'passing')
    const details = run.details as Details
    t.same(
      details.steps.map((step) => [step.name, step.status]),
      [
        ['sign in', 'passing'],
        ['place an order', 'passing'],
      ],
    )
    for (const step of details.steps) t.ok(step.durationMs > 0, `${step.name} took ${step.durationMs} ms`)
    t.equal(details.url, `${app}/account`)
    t.same(details.consoleErrors, [])
    t.ok(details.vitals.fcpMs === undefined || details.vitals.fcpMs >= 0, `Web Vitals where reported: ${JSON.stringify(details.vitals)}`)
    t.equal(run.screenshot, undefined, 'no screenshot of a success unless asked')
  })

  t.test('the button breaks: the run fails on the expectation, with a screenshot, the console error and the failed request', async (t) => {
    shop.broken = true
    const run = await runBrowser({ script }, 20_000, allowed, options)
    shop.broken = false
    t.match(run.error, /toHaveText/)
    const details = run.details as Details
    t.same(
      details.steps.map((step) => [step.name, step.status]),
      [
        ['sign in', 'passing'],
        ['place an order', 'failing'],
      ],
    )
    t.ok(details.consoleErrors.includes('order failed: 500'), `the page's console error is kept: ${JSON.stringify(details.consoleErrors)}`)
    t.ok(
      details.failedRequests.some((request) => request.url === `${app}/api/order` && request.status === 500),
      `the failed request is kept: ${JSON.stringify(details.failedRequests)}`,
    )
    t.ok(run.screenshot && run.screenshot.subarray(1, 4).toString() === 'PNG', 'a PNG screenshot of the failure')
    const file = path.join(screenshots, 'browser-check-failure.png')
    await rm(file, { force: true })
    await writeFile(file, run.screenshot!)
    t.pass(`kept at ${path.relative(process.cwd(), file)}`)
    const mended = await runBrowser({ script, screenshotOnSuccess: true }, 20_000, allowed, options)
    t.equal(mended.error, undefined, 'mended, it passes again')
    t.ok(mended.screenshot, 'with a screenshot when asked for one')
  })

  t.test('the script reads nothing of the runner’s, imports nothing, and reaches no private address', async (t) => {
    const sandboxed = await runBrowser(
      {
        script: [
          "if (Object.keys(process.env).length > 0) throw new Error('an environment')",
          "for (const file of ['/etc/hostname', '/proc/self/environ']) { try { (await import('node:fs')).readFileSync(file); throw new Error('read ' + file) } catch (error) { if (error.code !== 'ERR_ACCESS_DENIED') throw error } }",
          "try { (await import('node:child_process')).execSync('id'); throw new Error('ran a process') } catch (error) { if (error.code !== 'ERR_ACCESS_DENIED') throw error }",
          "(await import('node:net')).connect(80, '127.0.0.1')",
        ].join('\n'),
      },
      20_000,
      allowed,
      options,
    )
    t.match(sandboxed.error, /opens no connection of its own/, 'files, processes and the environment refused; then a socket too')
    const privately = await runBrowser({ script: `await page.goto('${app}/')` }, 20_000, { allowPrivateTargets: false }, options)
    t.match(privately.error, /page\.goto/)
    t.match((privately.details as Details).failedRequests[0], { url: /^http:\/\/127\.0\.0\.1/, failure: /refused/ })
  })

  t.test('the script reads the secrets it was given, and what the run keeps never shows their values', async (t) => {
    const run = await runBrowser(
      {
        script: `await page.goto('${app}/')
await page.getByLabel('Password').fill(secrets.SHOP_PASSWORD)
console.log(secrets.SHOP_PASSWORD)
secrets.SHOP_PASSWORD = 'changed'
if (secrets.SHOP_PASSWORD !== 'open sesame') throw new Error('the secrets were changed')
await expect(page.getByLabel('Password')).toHaveValue('something else', { timeout: 500 })`,
        secrets: { SHOP_PASSWORD: 'open sesame' },
      },
      20_000,
      allowed,
      options,
    )
    t.match(run.error, /toHaveValue/, 'the secrets are the runner’s: frozen, the script could not change them')
    t.match(run.error, /\[secret SHOP_PASSWORD\]/, 'the value the expectation saw is named, not shown')
    t.notMatch(JSON.stringify({ error: run.error, details: run.details }), /open sesame/, 'nowhere in what is kept')
  })

  t.test('a script that never ends is stopped at the check’s timeout', async (t) => {
    const run = await runBrowser({ script: 'await new Promise(() => {})' }, 1500, allowed, options)
    t.equal(run.error, 'timed out after 1500 ms')
  })
}
