import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The password the shop takes. */
export const SHOP_PASSWORD = 'open sesame'

export interface TestShop {
  /** `http://127.0.0.1:<port>` */
  url: string
  /** While true, placing an order answers 500 (the app's button is broken). */
  broken: boolean
}

/**
 * A small web shop on loopback that browser checks sign in to (issue 59): a sign-in form, an
 * account page whose button places an order with `fetch`, and a console error when that fails.
 */
export async function startShop(teardown: (fn: () => unknown) => void): Promise<TestShop> {
  const shop: TestShop = { url: '', broken: false }
  const server = createServer((request, response) => {
    const html = (content: string) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body>${content}</body></html>`)
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      if (request.url === '/' && request.method === 'GET')
        return html(
          '<form method="post" action="/login"><label>Email <input name="email"></label><label>Password <input name="password" type="password"></label><button>Sign in</button></form>',
        )
      if (request.url === '/login')
        return new URLSearchParams(body).get('password') === SHOP_PASSWORD
          ? response.writeHead(303, { location: '/account', 'set-cookie': 'session=s1; Path=/' }).end()
          : html('<p>Wrong password</p>')
      if (request.url === '/account' && request.headers.cookie === 'session=s1')
        return html(`<h1>Welcome, Ana</h1><button id="order">Place order</button><p id="result"></p>
<script>document.getElementById('order').onclick = async () => {
  const answer = await fetch('/api/order', { method: 'POST' })
  if (!answer.ok) { console.error('order failed: ' + answer.status); return }
  document.getElementById('result').textContent = 'Order placed'
}</script>`)
      if (request.url === '/api/order') return response.writeHead(shop.broken ? 500 : 200).end()
      if (request.url === '/favicon.ico') return response.writeHead(204).end()
      response.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  teardown(() => new Promise((resolve) => server.close(resolve)))
  shop.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return shop
}

/**
 * The script that signs in and places an order, in two steps; `password` is the expression it
 * types (a literal, or `secrets.NAME`).
 */
export function shopScript(url: string, password = `'${SHOP_PASSWORD}'`): string {
  return `
await test.step('sign in', async () => {
  await page.goto('${url}/')
  await page.getByLabel('Email').fill('ana@example.com')
  await page.getByLabel('Password').fill(${password})
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('heading', { name: 'Welcome, Ana' })).toBeVisible()
})
await test.step('place an order', async () => {
  await page.getByRole('button', { name: 'Place order' }).click()
  await expect(page.locator('#result')).toHaveText('Order placed', { timeout: 1000 })
})`
}
