import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from '../teardown.js'

/** A message or call the server accepted: the form fields the SDK sent. */
export interface TwilioRequest {
  sid: string
  kind: 'message' | 'call'
  to: string
  from: string
  /** The SMS text. */
  body?: string
  /** Where the call fetches its TwiML. */
  url?: string
  statusCallback?: string
}

/** A refusal for a number, as Twilio words it, e.g. `{ status: 400, code: 21211, message: 'invalid To' }`. */
export type TwilioRefusal = (to: string) => { status: number; code: number; message: string } | undefined

export interface TwilioTestServer {
  /** TWILIO_API_URL for the service under test. */
  url: string
  accountSid: string
  authToken: string
  from: string
  received: TwilioRequest[]
  /** X-Twilio-Signature for a callback to `url` with these form fields, as Twilio computes it. */
  sign(url: string, params: Record<string, string>): string
}

function reply(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

async function formOf(request: IncomingMessage): Promise<Record<string, string>> {
  let text = ''
  for await (const chunk of request) text += String(chunk)
  return Object.fromEntries(new URLSearchParams(text))
}

/**
 * A server on loopback that speaks the part of Twilio's REST API the service uses (2010-04-01
 * Messages.json and Calls.json, form-encoded, HTTP Basic with the account SID and auth token,
 * JSON answers and error bodies), so the real `twilio` SDK is driven over a real socket.
 */
export async function startTwilioServer(
  t: TestContext,
  refuse: TwilioRefusal = () => undefined,
  /**
   * Runs after a message or call is accepted and before the answer: a status callback that beats
   * it, for one. A refusal it answers is sent instead of the 201, as when Twilio took the message
   * but the API call failed on the way back.
   */
  beforeAnswer: (accepted: TwilioRequest) => Promise<ReturnType<TwilioRefusal>> = async () => undefined,
): Promise<TwilioTestServer> {
  const accountSid = `AC${randomBytes(16).toString('hex')}`
  // twilio is loaded here, not at the top: most test processes never start a Twilio server.
  const { default: twilio } = await import('twilio')
  const authToken = randomBytes(16).toString('hex')
  const from = '+15005550006'
  const received: TwilioRequest[] = []
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`

  const server = createServer((request, response) => {
    void (async () => {
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/(Messages|Calls)\.json$/.exec(request.url ?? '')
      if (request.method !== 'POST' || !match)
        return reply(response, 404, { code: 20404, message: 'The requested resource was not found', status: 404 })
      if (request.headers.authorization !== expectedAuth || match[1] !== accountSid) {
        return reply(response, 401, { code: 20003, message: 'Authenticate', status: 401 })
      }
      const form = await formOf(request)
      const to = form.To ?? ''
      const refusal = refuse(to)
      if (refusal) return reply(response, refusal.status, { code: refusal.code, message: refusal.message, status: refusal.status })
      const kind = match[2] === 'Messages' ? 'message' : 'call'
      const sid = `${kind === 'message' ? 'SM' : 'CA'}${randomBytes(16).toString('hex')}`
      const accepted: TwilioRequest = {
        sid,
        kind,
        to,
        from: form.From ?? '',
        ...(form.Body !== undefined ? { body: form.Body } : {}),
        ...(form.Url !== undefined ? { url: form.Url } : {}),
        ...(form.StatusCallback !== undefined ? { statusCallback: form.StatusCallback } : {}),
      }
      received.push(accepted)
      const lost = await beforeAnswer(accepted)
      if (lost) return reply(response, lost.status, { code: lost.code, message: lost.message, status: lost.status })
      reply(response, 201, { sid, account_sid: accountSid, to, from: form.From, status: 'queued', body: form.Body ?? null })
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    from,
    received,
    sign: (url, params) => twilio.getExpectedTwilioSignature(authToken, url, params),
  }
}
