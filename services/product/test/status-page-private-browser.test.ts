import { mkdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { chromium } from 'playwright-core'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { CHROMIUM, chromiumPresent, startSmtpServer, startTestService, until, workspaceRoot } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'
import { solidPng } from './png.js'

// A private status page in a real browser (issue 58): Debian's Chromium driven by playwright-core.
// An outsider sees a page that names nothing and asks for an e-mail address; a person of an
// allowed domain follows the e-mailed link, presses the button, reads the page, and signs out.
// Then a branded page: its policy lets the browser apply its theme and show its logo, nothing else.
// Then a page with audiences: a customer follows their audience's link and reads their own
// component and incident, which another browser on the same page does not see.
// Without Chromium here, the test says so and skips (CI installs it and fails without it).
if (await chromiumPresent(t, "the private page's browser check")) {
  // Links in e-mails are built from the product's public URL: the port is chosen before the service starts.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
  const origin = `http://127.0.0.1:${port}`
  const smtp = await startSmtpServer(t)
  const service = await startTestService(t, buildApp, {
    config: {
      publicUrls: { product: origin },
      notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Status <status@example.com>', retryDelaySeconds: 1 },
    },
  })
  const { app } = service
  await app.listen({ port, host: '127.0.0.1' })
  const { orgId, person } = await alertingOrganization(service, 'private-browser', { manager: { statuspages: 'manager' } })
  const manager = person('manager')
  const base = `/api/v1/statuspages/organizations/${orgId}`
  const call = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: manager.headers, payload })
  const page = (
    await call(`${base}/pages`, {
      name: 'Partner Portal',
      slug: 'partner-portal',
      published: true,
      visibility: 'private',
      viewerEmailDomains: ['customer.example'],
    })
  ).json()
  const api = (await call(`${base}/pages/${page.id}/components`, { name: 'Orders API' })).json()
  await call(`${base}/pages/${page.id}/incidents`, {
    name: 'Order sync delayed',
    body: 'Orders reach your ERP up to ten minutes late.',
    impact: 'minor',
    components: [{ componentId: api.id, status: 'degraded_performance' }],
  })
  const root = `${origin}/api/v1/statuspages/public/partner-portal/`

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // This machine's network is closed, and its kernel gives Chromium's sandbox nothing to use.
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  })
  t.teardown(() => browser.close())
  const screenshots = path.join(workspaceRoot(), '.tap/screenshots')
  await mkdir(screenshots, { recursive: true })

  t.test('an outsider is shown a page that names nothing; a reader of an allowed domain signs in by e-mail', async (t) => {
    const context = await browser.newContext({ locale: 'en-GB' })
    t.teardown(() => context.close())
    const tab = await context.newPage()
    const first = await tab.goto(root)
    t.equal(first?.status(), 404)
    t.equal(await tab.locator('h1').textContent(), 'Status page not found')
    t.notMatch(await tab.content(), /Partner Portal|Orders API/, 'nothing of the page shows')

    await tab.getByRole('textbox').fill('ana@customer.example')
    await tab.getByRole('button', { name: 'Send me a link' }).click()
    await tab.waitForURL(`${root}access`)
    t.equal(await tab.locator('h1').textContent(), 'Check your e-mail')

    const mail = await until('the sign-in e-mail', () => smtp.received.find((sent) => sent.envelopeTo.includes('ana@customer.example')))
    const link = /Sign in: (\S+)/.exec(mail.text)?.[1]
    t.ok(link?.startsWith(`${root}access/verify?token=`), 'the link leads to the page’s own address')
    await tab.goto(link!)
    await tab.getByRole('button', { name: 'Continue to the status page' }).click()
    await tab.waitForURL(root)
    t.equal(await tab.locator('h1').textContent(), 'Partner Portal')
    t.match(await tab.locator('body').textContent(), /Order sync delayed/)
    t.equal(await tab.locator('meta[name=robots]').getAttribute('content'), 'noindex, nofollow')
    const file = path.join(screenshots, 'private-status-page.png')
    await rm(file, { force: true })
    const png = await tab.screenshot({ path: file, fullPage: true })
    t.ok(png.length > 10_000, `a screenshot of the signed-in page is saved at ${path.relative(process.cwd(), file)}`)

    const stranger = await browser.newContext()
    t.teardown(() => stranger.close())
    const theirs = await stranger.newPage()
    t.equal((await theirs.goto(root))?.status(), 404, 'another browser, without the cookie, still sees nothing')

    await tab.getByRole('button', { name: 'Sign out' }).click()
    t.equal(await tab.locator('h1').textContent(), 'Signed out')
    t.equal((await tab.goto(root))?.status(), 404, 'signed out, the page is gone again')
  })

  t.test('a branded page shows its theme, logo, links and footer, and the browser reports no refused style or image', async (t) => {
    const branded = (
      await call(`${base}/pages`, {
        name: 'Brandy',
        slug: 'brandy',
        published: true,
        theme: { '--header-background': '#0b3d2e', '--header-text': '#ffffff', '--link': '#0b6e4f' },
        headerLinks: [{ label: 'Brandy home', url: 'https://brandy.example/' }],
        footerText: 'Brandy Ltd, 1 Cask Lane',
      })
    ).json()
    await app.inject({
      method: 'PUT',
      url: `${base}/pages/${branded.id}/branding/logo`,
      headers: { ...manager.headers, 'content-type': 'image/png' },
      payload: solidPng(160, 40, [240, 200, 80]),
    })
    const context = await browser.newContext()
    t.teardown(() => context.close())
    const tab = await context.newPage()
    const refused: string[] = []
    tab.on('console', (message) => {
      if (message.type() === 'error') refused.push(message.text())
    })
    t.equal((await tab.goto(`${origin}/api/v1/statuspages/public/brandy/`))?.status(), 200)
    // Evaluated in the page, as text: this project's TypeScript knows Node, not the DOM.
    t.equal(await tab.evaluate("getComputedStyle(document.querySelector('header.brand')).backgroundColor"), 'rgb(11, 61, 46)')
    t.equal(await tab.evaluate("document.querySelector('header.brand img').naturalWidth"), 160, 'the logo loaded')
    t.equal(await tab.getByRole('link', { name: 'Brandy home' }).getAttribute('href'), 'https://brandy.example/')
    t.match(await tab.locator('footer').textContent(), /Brandy Ltd, 1 Cask Lane/)
    t.same(refused, [], 'nothing was refused by the page’s policy')
    const file = path.join(screenshots, 'branded-status-page.png')
    await rm(file, { force: true })
    const png = await tab.screenshot({ path: file, fullPage: true })
    t.ok(png.length > 10_000, `a screenshot of the branded page is saved at ${path.relative(process.cwd(), file)}`)
  })

  t.test('an audience’s link shows its reader their own components and incidents; another browser sees only everyone’s', async (t) => {
    const shared = (await call(`${base}/pages`, { name: 'Shared Cloud', slug: 'shared-cloud', published: true })).json()
    const pageBase = `${base}/pages/${shared.id}`
    const acme = (await call(`${pageBase}/audiences`, { name: 'Acme' })).json()
    await call(`${pageBase}/components`, { name: 'Public API' })
    const database = (await call(`${pageBase}/components`, { name: 'Acme dedicated database', audienceIds: [acme.id] })).json()
    await call(`${pageBase}/incidents`, {
      name: 'Acme database failover',
      body: 'Your database moved to its standby.',
      impact: 'major',
      audienceIds: [acme.id],
      components: [{ componentId: database.id, status: 'partial_outage' }],
    })
    const sharedRoot = `${origin}/api/v1/statuspages/public/shared-cloud/`
    t.match(acme.link, `${sharedRoot}audience?token=`, 'the link is built from the product’s public URL')

    const customer = await browser.newContext({ locale: 'en-GB' })
    t.teardown(() => customer.close())
    const tab = await customer.newPage()
    await tab.goto(acme.link)
    t.equal(tab.url(), sharedRoot, 'the link leads to the page itself')
    const seen = await tab.locator('body').textContent()
    t.match(seen, /Acme dedicated database/)
    t.match(seen, /Acme database failover/)
    const file = path.join(screenshots, 'audience-status-page.png')
    await rm(file, { force: true })
    const png = await tab.screenshot({ path: file, fullPage: true })
    t.ok(png.length > 10_000, `a screenshot of Acme’s view is saved at ${path.relative(process.cwd(), file)}`)
    await tab.reload()
    t.match(await tab.locator('body').textContent(), /Acme database failover/, 'the browser keeps reading as Acme')

    const other = await browser.newContext({ locale: 'en-GB' })
    t.teardown(() => other.close())
    const theirs = await other.newPage()
    t.equal((await theirs.goto(sharedRoot))?.status(), 200)
    const everyone = await theirs.locator('body').textContent()
    t.match(everyone, /Public API/)
    t.notMatch(everyone, /Acme/, 'another browser reads nothing of Acme')

    await tab.getByRole('button', { name: 'Sign out' }).click()
    t.notMatch(await (await tab.goto(sharedRoot))!.text(), /Acme/, 'signed out, the browser reads what everyone reads')
  })
}
