import { createECDH, createDecipheriv, createPublicKey, hkdfSync, randomBytes, randomUUID, verify } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TestContext } from '../teardown.js'

/** A push message the service took: its VAPID claims (signature verified) and the decrypted payload. */
export interface ReceivedPush {
  subscriptionId: string
  headers: IncomingHttpHeaders
  claims: { aud: string; exp: number; sub: string }
  /** The application server key the JWT was signed with (the `k` of the Authorization header). */
  vapidKey: string
  payload: string
}

export interface PushTestService {
  /** The service's certificate (self-signed): trust it through the notifier's `webPush.extraCa`. */
  ca: string
  received: ReceivedPush[]
  /** A browser's subscription to this service: its own P-256 key pair and auth secret, as PushSubscription.toJSON() gives them. */
  subscribe(): { endpoint: string; keys: { p256dh: string; auth: string } }
  /** Makes the subscription answer 410 Gone from now on (the browser unsubscribed). */
  expire(endpoint: string): void
}

const b64url = (bytes: Buffer) => bytes.toString('base64url')
const info = (label: string) => Buffer.from(`Content-Encoding: ${label}\0`)

/** RFC 8291 (with RFC 8188's aes128gcm, one record): what the browser does with a push message. */
function decrypt(body: Buffer, browser: { ecdh: ReturnType<typeof createECDH>; auth: Buffer }): string {
  const salt = body.subarray(0, 16)
  const idLength = body.readUInt8(20)
  const serverKey = body.subarray(21, 21 + idLength)
  const ciphertext = body.subarray(21 + idLength)
  const shared = browser.ecdh.computeSecret(serverKey)
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browser.ecdh.getPublicKey(), serverKey])
  const ikm = Buffer.from(hkdfSync('sha256', shared, browser.auth, keyInfo, 32))
  const key = Buffer.from(hkdfSync('sha256', ikm, salt, info('aes128gcm'), 16))
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, info('nonce'), 12))
  const decipher = createDecipheriv('aes-128-gcm', key, nonce)
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()])
  // The last record ends with the delimiter 0x02 and zero or more zero bytes of padding.
  let end = padded.length - 1
  while (end > 0 && padded[end] === 0) end -= 1
  if (padded[end] !== 2) throw new Error('no last-record delimiter')
  return padded.subarray(0, end).toString('utf8')
}

/** RFC 8292: `vapid t=<ES256 JWT>, k=<application server key>`, the JWT checked against the key it names. */
function vapidOf(authorization: string | undefined): { claims: ReceivedPush['claims']; key: string } {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? '')
  if (!match) throw new Error(`not a VAPID authorization: ${authorization}`)
  const [, token = '', key = ''] = match
  const [header = '', claims = '', signature = ''] = token.split('.')
  const point = Buffer.from(key, 'base64url')
  const publicKey = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64url(point.subarray(1, 33)), y: b64url(point.subarray(33, 65)) },
    format: 'jwk',
  })
  const signed = Buffer.from(`${header}.${claims}`)
  if (!verify('sha256', signed, { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))) {
    throw new Error('the VAPID signature does not verify')
  }
  return { claims: JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')), key }
}

/**
 * A web push service (RFC 8030) on loopback over HTTPS, as browsers' vendors run them: it checks
 * each message's VAPID signature, decrypts the payload with the subscribing browser's keys, and
 * answers 201 with the message's `Location`, or 410 for an expired subscription, 401 for a bad
 * signature and 400 for what it cannot decrypt.
 */
export async function startPushService(t: TestContext): Promise<PushTestService> {
  // selfsigned is loaded here, not at the top: most test processes never start a push service.
  const { generate } = await import('selfsigned')
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  })
  const browsers = new Map<string, { ecdh: ReturnType<typeof createECDH>; auth: Buffer }>()
  const expired = new Set<string>()
  const received: ReceivedPush[] = []
  const server = createServer({ key: pems.private, cert: pems.cert }, (request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const subscriptionId = (request.url ?? '').replace(/^\/push\//, '')
      const browser = browsers.get(subscriptionId)
      if (!browser || expired.has(subscriptionId)) return void response.writeHead(410).end('push subscription has unsubscribed or expired')
      let vapid
      try {
        vapid = vapidOf(request.headers.authorization)
      } catch (error) {
        return void response.writeHead(401).end((error as Error).message)
      }
      try {
        const payload = decrypt(Buffer.concat(chunks), browser)
        received.push({ subscriptionId, headers: request.headers, claims: vapid.claims, vapidKey: vapid.key, payload })
      } catch (error) {
        return void response.writeHead(400).end(`cannot decrypt: ${(error as Error).message}`)
      }
      response.writeHead(201, { location: `${origin}/message/${randomUUID()}` }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    ca: pems.cert,
    received,
    subscribe() {
      const id = randomUUID()
      const ecdh = createECDH('prime256v1')
      ecdh.generateKeys()
      const auth = randomBytes(16)
      browsers.set(id, { ecdh, auth })
      return { endpoint: `${origin}/push/${id}`, keys: { p256dh: b64url(ecdh.getPublicKey()), auth: b64url(auth) } }
    },
    expire(endpoint) {
      expired.add(endpoint.split('/').pop() ?? '')
    },
  }
}
