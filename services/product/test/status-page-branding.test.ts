import { createHash } from 'node:crypto'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'
import { solidPng } from './png.js'

// Branding (issue 58; decision 0015, "Branding"): colours of declared CSS variables held to
// WCAG AA, header links, a footer, and a logo and favicon checked by what their bytes are and
// served by their hash; the page, the widget, the badge and subscribers' e-mails use them.
const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: { notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Status <status@example.com>', retryDelaySeconds: 1 } },
})
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'brand', {
  manager: { statuspages: 'manager' },
  viewer: { statuspages: 'viewer' },
})
const [manager, viewer] = ['manager', 'viewer'].map(person)
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const base = `/api/v1/statuspages/organizations/${orgId}`
const page = (await call(manager!, 'POST', `${base}/pages`, { name: 'Brandy', slug: 'brandy', published: true })).json()
const pageBase = `${base}/pages/${page.id}`
const publicRoot = '/api/v1/statuspages/public/brandy'
const upload = (who: Who, kind: string, bytes: Buffer, type = 'image/png') =>
  app.inject({ method: 'PUT', url: `${pageBase}/branding/${kind}`, headers: { ...who.headers, 'content-type': type }, payload: bytes })
const styleHashes = (html: string) =>
  [...html.matchAll(/<style>([^<]*)<\/style>/g)].map((match) => `'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`)

const theme = { '--header-background': '#0b3d2e', '--header-text': '#ffffff', '--link': '#0b6e4f', '--button': '#0b3d2e' }

t.test('a theme is colours of declared variables, and unreadable text is refused with the pair and its contrast', async (t) => {
  const refused: Array<[object, RegExp]> = [
    [
      { theme: { '--text': '#777777' } },
      /theme.*--text #777777 on --background #f6f7f9 has a contrast of 4\.\d\d:1; WCAG AA asks for at least 4\.5:1/,
    ],
    [{ theme: { '--header-text': '#ffffff', '--header-background': '#ffff00' } }, /--header-text #ffffff on --header-background #ffff00/],
    [{ theme: { '--background': 'red;background:url(https://evil.example/x)' } }, /theme/],
    [{ theme: { position: '#000000' } }, /theme/],
    [{ headerLinks: [{ label: 'Home', url: 'javascript:alert(1)' }] }, /headerLinks\/0\/url must be an http or https URL/],
    [{ footerText: 'x'.repeat(501) }, /footerText/],
  ]
  for (const [payload, message] of refused) {
    const response = await call(manager!, 'PATCH', pageBase, payload)
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.match(response.json().message, message)
  }
  t.same((await call(viewer!, 'GET', pageBase)).json().theme, {}, 'nothing refused was kept')
  t.equal((await call(viewer!, 'PATCH', pageBase, { theme })).statusCode, 403, 'a viewer brands nothing')

  const branded = await call(manager!, 'PATCH', pageBase, {
    theme,
    headerLinks: [{ label: 'Brandy home', url: 'https://brandy.example/' }],
    footerText: '  Brandy Ltd, 1 Cask Lane  ',
  })
  t.equal(branded.statusCode, 200, branded.body)
  t.match(branded.json(), {
    theme,
    headerLinks: [{ label: 'Brandy home', url: 'https://brandy.example/' }],
    footerText: 'Brandy Ltd, 1 Cask Lane',
  })
})

t.test('a logo and a favicon are checked by their bytes and served by their hash, cached for ever', async (t) => {
  const cases: Array<[string, Buffer, string, number, RegExp]> = [
    [
      'logo',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      'image/svg+xml',
      400,
      /SVG can carry script/,
    ],
    ['logo', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;'), 'image/png', 400, /a logo must be png, jpg, webp; this is gif/],
    ['logo', Buffer.from('not an image at all'), 'image/png', 400, /not an image this service reads/],
    ['logo', solidPng(3000, 10, [0, 0, 0]), 'image/png', 400, /at most 2048×2048 pixels; this is 3000×10/],
    ['favicon', solidPng(600, 600, [0, 0, 0]), 'image/png', 400, /at most 512×512 pixels/],
    ['banner', solidPng(10, 10, [0, 0, 0]), 'image/png', 400, /kind/],
  ]
  for (const [kind, bytes, type, status, message] of cases) {
    const response = await upload(manager!, kind, bytes, type)
    t.equal(response.statusCode, status, `${kind} ${type}`)
    t.match(response.json().message, message)
  }
  const huge = await upload(manager!, 'logo', Buffer.alloc(600 * 1024, 1))
  t.equal(huge.statusCode, 413, 'past the largest allowed upload, the body is not even read')
  t.equal((await upload(viewer!, 'logo', solidPng(10, 10, [0, 0, 0]))).statusCode, 403)

  const logo = solidPng(160, 40, [11, 61, 46])
  const uploaded = await upload(manager!, 'logo', logo)
  t.equal(uploaded.statusCode, 200, uploaded.body)
  t.match(uploaded.json(), { kind: 'logo', contentType: 'image/png', width: 160, height: 40 })
  t.match(uploaded.json().url, /\/api\/v1\/statuspages\/public\/brandy\/assets\/[0-9a-f]{32}\.png$/)
  t.equal((await upload(manager!, 'favicon', solidPng(32, 32, [11, 61, 46]))).statusCode, 200)
  const described = (await call(viewer!, 'GET', pageBase)).json()
  t.equal(described.logoUrl, uploaded.json().url)
  t.match(described.faviconUrl, /assets\/[0-9a-f]{32}\.png$/)

  const served = await app.inject({ method: 'GET', url: new URL(uploaded.json().url).pathname })
  t.equal(served.statusCode, 200)
  t.equal(served.headers['content-type'], 'image/png')
  t.equal(served.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.same(served.rawPayload, logo, 'the bytes uploaded')
  t.equal((await app.inject({ method: 'GET', url: `${publicRoot}/assets/${'0'.repeat(32)}.png` })).statusCode, 404)
})

t.test('the page, the widget and the badge wear the brand, and the policy allows exactly its styles', async (t) => {
  const html = await app.inject({ method: 'GET', url: `${publicRoot}/` })
  t.equal(html.statusCode, 200)
  t.match(
    html.body,
    /<header class="brand"><div class="inner"><img src="[^"]+\/assets\/[0-9a-f]{32}\.png" alt=""><h1>Brandy<\/h1><nav><a href="https:\/\/brandy\.example\/"/,
  )
  t.match(html.body, /--header-background:#0b3d2e/)
  t.match(html.body, /<link rel="icon" href="[^"]+\/assets\/[0-9a-f]{32}\.png">/)
  t.match(html.body, /Brandy Ltd, 1 Cask Lane/)
  const policy = String(html.headers['content-security-policy'])
  const hashes = styleHashes(html.body)
  t.equal(hashes.length, 2)
  t.equal(policy.match(/style-src ([^;]+);/)?.[1], hashes.join(' '), 'the style sheet and the theme, each by hash, and nothing else')

  const widget = await app.inject({ method: 'GET', url: `${publicRoot}/embed` })
  t.match(widget.body, /--header-background:#0b3d2e/)
  t.equal(String(widget.headers['content-security-policy']).match(/style-src ([^;]+);/)?.[1], styleHashes(widget.body).join(' '))

  const badge = await app.inject({ method: 'GET', url: `${publicRoot}/badge.svg` })
  t.match(badge.body, /fill="#0b3d2e"/, 'the badge’s label takes the header colour')
})

t.test('subscribers’ e-mails carry the page’s footer', async (t) => {
  await app.inject({ method: 'POST', url: `${publicRoot}/subscribers`, payload: { email: 'fan@brandy.example' } })
  const confirmation = await until('the confirmation', () => smtp.received.find((mail) => mail.envelopeTo.includes('fan@brandy.example')))
  const link = new URL(/(http\S+subscribers\/confirm\S+)/.exec(confirmation.text)![1]!)
  t.equal((await app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })).statusCode, 200)
  await call(manager!, 'POST', `${pageBase}/incidents`, { name: 'Cellar flooded', body: 'We are pumping.', impact: 'minor' })
  const update = await until('the incident e-mail', () =>
    smtp.received.find((mail) => mail.envelopeTo.includes('fan@brandy.example') && /Cellar flooded/.test(mail.subject)),
  )
  t.match(update.text, /Brandy Ltd, 1 Cask Lane/)
})

t.test('removing the logo takes it off the page', async (t) => {
  t.equal((await call(manager!, 'DELETE', `${pageBase}/branding/logo`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${pageBase}/branding/logo`)).statusCode, 404)
  t.equal((await call(viewer!, 'GET', pageBase)).json().logoUrl, null)
  t.notMatch((await app.inject({ method: 'GET', url: `${publicRoot}/` })).body, /<img src=/)
})
