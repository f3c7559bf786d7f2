import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { CHROMIUM, chromiumPresent, startTestService, workspaceRoot } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// The public page in a real browser: Debian's Chromium (installed by .ci/run), headless. The page
// has no script and its Content-Security-Policy allows none, so what Chromium shows is what a
// browser with JavaScript off shows. Without Chromium here, the test says so and skips (CI fails).
if (await chromiumPresent(t, 'the browser check of the status page')) {
  const service = await startTestService(t, buildApp)
  const { app } = service
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const { orgId, person } = await alertingOrganization(service, 'browser', { manager: { statuspages: 'manager' } })
  const manager = person('manager')
  const base = `/api/v1/statuspages/organizations/${orgId}`
  const call = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: manager.headers, payload })
  const page = (await call(`${base}/pages`, { name: 'Browser Co', slug: 'browser-co', published: true })).json()
  const api = (await call(`${base}/pages/${page.id}/components`, { name: 'Checkout API' })).json()
  await call(`${base}/pages/${page.id}/components`, { name: 'Dashboard' })
  await call(`${base}/pages/${page.id}/incidents`, {
    name: 'Checkout failures',
    body: 'Some payments fail; we are on it.',
    impact: 'major',
    components: [{ componentId: api.id, status: 'partial_outage' }],
  })

  const browse = promisify(execFile)
  const profile = await mkdtemp(path.join(tmpdir(), 'chromium-'))
  t.teardown(() => rm(profile, { recursive: true, force: true }))
  // Flags from the machine notes: no background networking (this machine's network is closed).
  const flags = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    '--window-size=1100,1400',
  ]
  const url = `${address}/api/v1/statuspages/public/browser-co/`

  t.test('the public page renders in Chromium with JavaScript off', async (t) => {
    const { stdout: dom } = await browse(CHROMIUM, [...flags, '--dump-dom', url], { timeout: 60_000, maxBuffer: 10_000_000 })
    t.match(dom, /Browser Co/)
    t.match(dom, /Partial System Outage/)
    t.match(dom, /Checkout failures/)
    t.match(dom, /Some payments fail; we are on it\./)
    t.match(dom, /Checkout API/)
    t.match(dom, /class="bars"/, 'the 90-day uptime bars are there')

    const screenshots = path.join(workspaceRoot(), '.tap/screenshots')
    await mkdir(screenshots, { recursive: true })
    const file = path.join(screenshots, 'status-page.png')
    await rm(file, { force: true })
    await browse(CHROMIUM, [...flags, `--screenshot=${file}`, url], { timeout: 60_000 })
    const png = await readFile(file)
    t.same([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], `a PNG screenshot is saved at ${path.relative(process.cwd(), file)}`)
    t.ok(png.length > 10_000, 'the screenshot has content')
  })

  t.test('another site shows the badge as an <img> (Cross-Origin-Resource-Policy: cross-origin)', async (t) => {
    // `localhost` and `127.0.0.1` are different sites to a browser: the embedding page is cross-site.
    const embedded = `${address}/api/v1/statuspages/public/browser-co`
    const other = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      response.end(
        `<!doctype html><html><body><img src="${embedded}/badge.svg" onload="document.body.dataset.badge = 'loaded ' + this.naturalWidth" onerror="document.body.dataset.badge = 'blocked'"></body></html>`,
      )
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())))
    const otherUrl = `http://localhost:${(other.address() as AddressInfo).port}/`
    const { stdout: dom } = await browse(CHROMIUM, [...flags, '--virtual-time-budget=5000', '--dump-dom', otherUrl], {
      timeout: 60_000,
      maxBuffer: 10_000_000,
    })
    t.match(dom, /data-badge="loaded [1-9]\d*"/, 'Chromium loaded and decoded the badge')
  })
}
