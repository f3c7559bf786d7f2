import { randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from './teardown.js'

async function textOf(request: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of request) text += String(chunk)
  return text
}

async function listen(t: TestContext, handler: (request: IncomingMessage, response: ServerResponse) => Promise<void>): Promise<string> {
  const server = createServer((request, response) => void handler(request, response).catch(() => response.writeHead(500).end()))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A request a webhook receiver got: its path, headers and body (parsed when JSON). */
export interface ReceivedRequest {
  path: string
  headers: IncomingHttpHeaders
  raw: string
  body: unknown
  /** When it arrived (Date.now()). */
  at: number
}

export interface WebhookReceiver {
  url: string
  received: ReceivedRequest[]
}

/**
 * An HTTP receiver on loopback for incoming webhooks (Slack, Teams, Discord) and outbound
 * webhooks: it keeps every POST and answers what `answer` says for the path (200 "ok" by default).
 */
export async function startWebhookReceiver(
  t: TestContext,
  answer: (path: string, attempt: number) => { status: number; body?: string } = () => ({ status: 200, body: 'ok' }),
): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = []
  const url = await listen(t, async (request, response) => {
    const raw = await textOf(request)
    const path = request.url ?? '/'
    let body: unknown = raw
    try {
      body = JSON.parse(raw)
    } catch {
      // Not JSON: kept as text.
    }
    received.push({ path, headers: request.headers, raw, body, at: Date.now() })
    const reply = answer(path, received.filter((entry) => entry.path === path).length)
    response.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.body ?? '')
  })
  return { url, received }
}

/** A chat.postMessage call the Slack server accepted. */
export interface SlackPost {
  token: string
  channel: string
  text: string
  blocks: unknown
}

export interface SlackTestServer {
  /** SLACK_API_URL for the service under test. */
  apiUrl: string
  botToken: string
  posts: SlackPost[]
}

/**
 * A server on loopback speaking the part of Slack's Web API the service uses (`chat.postMessage`:
 * form or JSON bodies, Bearer tokens, `{ ok, error }` answers), so `@slack/web-api` is driven
 * over a real socket. Channel `C-MISSING` answers `channel_not_found`; other tokens `invalid_auth`.
 */
export async function startSlackServer(t: TestContext): Promise<SlackTestServer> {
  const botToken = `xoxb-${randomBytes(12).toString('hex')}`
  const posts: SlackPost[] = []
  const json = (response: ServerResponse, body: object): void => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const url = await listen(t, async (request, response) => {
    const raw = await textOf(request)
    if (request.method !== 'POST' || request.url !== '/api/chat.postMessage') return json(response, { ok: false, error: 'unknown_method' })
    if (request.headers.authorization !== `Bearer ${botToken}`) return json(response, { ok: false, error: 'invalid_auth' })
    const form: Record<string, unknown> = (request.headers['content-type'] ?? '').includes('json')
      ? (JSON.parse(raw) as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(raw))
    const channel = String(form.channel ?? '')
    if (channel === 'C-MISSING') return json(response, { ok: false, error: 'channel_not_found' })
    const blocks = typeof form.blocks === 'string' ? (JSON.parse(form.blocks) as unknown) : form.blocks
    posts.push({ token: botToken, channel, text: String(form.text ?? ''), blocks })
    json(response, { ok: true, channel, ts: `${Date.now() / 1000}`, message: { text: form.text } })
  })
  return { apiUrl: `${url}/api/`, botToken, posts }
}
