import { createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from '../teardown.js'

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

/** A chat.postMessage or chat.update call the Slack server accepted. */
export interface SlackPost {
  token: string
  channel: string
  text: string
  blocks: unknown
  /** The message's ts: a new one for chat.postMessage, the one rewritten for chat.update. */
  ts: string
}

/** What Slack's `response_url` got: ephemeral answers to a button press. */
export interface SlackResponse {
  id: string
  body: { response_type?: string; replace_original?: boolean; text?: string }
}

export interface SlackTestServer {
  /** SLACK_API_URL for the service under test. */
  apiUrl: string
  botToken: string
  /** The signing secret of the Slack app, to sign the requests this server sends. */
  signingSecret: string
  posts: SlackPost[]
  updates: SlackPost[]
  /** Channels made with conversations.create: id, name and who was invited. */
  channels: Array<{ id: string; name: string; invited: string[] }>
  responses: SlackResponse[]
  /** How often users.info was asked (the service caches what it answers). */
  userInfoCalls: () => number
  /** How many calls were refused `invalid_auth` (a token other than `botToken`). */
  refusals: () => number
  /** A workspace user with an e-mail address (users.info, users.lookupByEmail). */
  addUser(slackUserId: string, email: string): void
  /**
   * Sends what Slack sends when a button is pressed or a slash command is run: a form posted to
   * `url`, signed with the signing secret (`X-Slack-Signature` v0) at `timestamp` (now unless
   * given). Answers the status and the body.
   */
  send(
    url: string,
    form: Record<string, string>,
    options?: { timestamp?: number; secret?: string },
  ): Promise<{ status: number; body: string }>
  /** A response_url of this server, as block_actions payloads carry. */
  responseUrl(): string
}

/** Slack's request signature: `v0=` HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret. */
export function slackSignature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`
}

/**
 * A server on loopback speaking the part of Slack's Web API the service uses (chat.postMessage,
 * chat.update, users.info, users.lookupByEmail, conversations.create, conversations.invite:
 * form or JSON bodies, Bearer tokens, `{ ok, error }` answers), so `@slack/web-api` is driven
 * over a real socket, and sending signed interactivity and slash-command requests as Slack does.
 * Channel `C-MISSING` answers `channel_not_found`; other tokens `invalid_auth`.
 */
export async function startSlackServer(t: TestContext): Promise<SlackTestServer> {
  const botToken = `xoxb-${randomBytes(12).toString('hex')}`
  const signingSecret = randomBytes(16).toString('hex')
  const posts: SlackPost[] = []
  const updates: SlackPost[] = []
  const channels: SlackTestServer['channels'] = []
  const responses: SlackResponse[] = []
  const users = new Map<string, string>()
  let userInfoCalls = 0
  let refusals = 0
  let sequence = 0
  const json = (response: ServerResponse, body: object): void => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const url = await listen(t, async (request, response) => {
    const raw = await textOf(request)
    const path = String(request.url)
    if (path.startsWith('/respond/')) {
      responses.push({ id: path.slice('/respond/'.length), body: JSON.parse(raw) as SlackResponse['body'] })
      response.writeHead(200).end('ok')
      return
    }
    if (request.headers.authorization !== `Bearer ${botToken}`) {
      refusals += 1
      return json(response, { ok: false, error: 'invalid_auth' })
    }
    // @slack/web-api posts forms; a field it leaves out reads as ''.
    const params = new URLSearchParams(raw)
    const field = (name: string) => params.get(name) || ''
    const method = path.slice('/api/'.length)
    const channel = field('channel')
    if (channel === 'C-MISSING') return json(response, { ok: false, error: 'channel_not_found' })
    const message = { token: botToken, channel, text: field('text'), blocks: JSON.parse(field('blocks') || 'null') as unknown }
    switch (method) {
      case 'chat.postMessage': {
        const ts = `${Math.floor(Date.now() / 1000)}.${String(++sequence).padStart(6, '0')}`
        posts.push({ ...message, ts })
        return json(response, { ok: true, channel, ts, message: { text: message.text } })
      }
      case 'chat.update': {
        const ts = field('ts')
        if (!posts.some((post) => post.channel === channel && post.ts === ts))
          return json(response, { ok: false, error: 'message_not_found' })
        updates.push({ ...message, ts })
        return json(response, { ok: true, channel, ts })
      }
      case 'users.info': {
        userInfoCalls += 1
        const id = field('user')
        const email = users.get(id)
        if (!email) return json(response, { ok: false, error: 'user_not_found' })
        return json(response, { ok: true, user: { id, profile: { email } } })
      }
      case 'users.lookupByEmail': {
        const found = [...users].find(([, email]) => email === field('email'))
        if (!found) return json(response, { ok: false, error: 'users_not_found' })
        return json(response, { ok: true, user: { id: found[0], profile: { email: found[1] } } })
      }
      case 'conversations.create': {
        const name = field('name')
        if (!/^[a-z0-9_-]{1,80}$/.test(name)) return json(response, { ok: false, error: 'invalid_name_specials' })
        if (channels.some((known) => known.name === name)) return json(response, { ok: false, error: 'name_taken' })
        const id = `C${String(channels.length + 1).padStart(8, '0')}`
        channels.push({ id, name, invited: [] })
        return json(response, { ok: true, channel: { id, name } })
      }
      case 'conversations.invite': {
        const known = channels.find((candidate) => candidate.id === channel)!
        known.invited.push(...field('users').split(','))
        return json(response, { ok: true, channel: { id: known.id } })
      }
      default:
        return json(response, { ok: false, error: 'unknown_method' })
    }
  })
  return {
    apiUrl: `${url}/api/`,
    botToken,
    signingSecret,
    posts,
    updates,
    channels,
    responses,
    userInfoCalls: () => userInfoCalls,
    refusals: () => refusals,
    addUser: (slackUserId, email) => void users.set(slackUserId, email),
    responseUrl: () => `${url}/respond/${randomBytes(6).toString('hex')}`,
    async send(target, form, { timestamp = Math.floor(Date.now() / 1000), secret = signingSecret } = {}) {
      const body = new URLSearchParams(form).toString()
      const answer = await fetch(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': slackSignature(secret, timestamp, body),
        },
        body,
      })
      return { status: answer.status, body: await answer.text() }
    },
  }
}
