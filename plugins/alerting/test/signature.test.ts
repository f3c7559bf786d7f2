import { createHmac } from 'node:crypto'
import t from 'tap'
import { SIGNATURE_TOLERANCE_SECONDS, verifyDelivery, verifySignature } from '../src/intake/signature.js'

const secret = 'a-signing-secret-of-some-length'
const body = Buffer.from('{"title":"x"}')
const digest = (text: string) => createHmac('sha256', secret).update(text).digest('hex')
const now = 1_800_000_000

t.test('the timestamp tolerance is exactly 300 seconds either way', async (t) => {
  for (const offset of [-SIGNATURE_TOLERANCE_SECONDS, 0, SIGNATURE_TOLERANCE_SECONDS]) {
    const at = now + offset
    t.doesNotThrow(() => verifySignature(`t=${at},v1=${digest(`${at}.${body.toString()}`)}`, secret, body, now), `offset ${offset}`)
  }
  for (const offset of [-SIGNATURE_TOLERANCE_SECONDS - 1, SIGNATURE_TOLERANCE_SECONDS + 1]) {
    const at = now + offset
    t.throws(
      () => verifySignature(`t=${at},v1=${digest(`${at}.${body.toString()}`)}`, secret, body, now),
      { code: 'UNAUTHORIZED', statusCode: 401 },
      `offset ${offset}`,
    )
  }
})

t.test('any one of several v1 digests may match (secret rotation on the sender side)', async (t) => {
  const valid = digest(`${now}.${body.toString()}`)
  t.doesNotThrow(() => verifySignature(`t=${now},v1=${'0'.repeat(64)},v1=${valid}`, secret, body, now))
})

t.test('a digest of the wrong length, and repeated headers, are refused without throwing anything but a 401', async (t) => {
  t.throws(() => verifySignature('sha256=abcd', secret, body, now), { code: 'UNAUTHORIZED', statusCode: 401 })
  t.throws(() => verifySignature(['sha256=a', 'sha256=b'], secret, body, now), { code: 'UNAUTHORIZED', statusCode: 401 })
  t.throws(() => verifySignature(`t=${now},v1=`, secret, body, now), { code: 'UNAUTHORIZED', statusCode: 401 })
})

t.test('a delivery proves the secret by our signature, Grafana’s, or the secret itself', async (t) => {
  const grafana = createHmac('sha256', secret).update(body).digest('hex')
  const timed = createHmac('sha256', secret).update(`${now}:${body.toString()}`).digest('hex')
  t.doesNotThrow(() => verifyDelivery({ signature: undefined, grafana: { signature: grafana } }, secret, body, now))
  t.doesNotThrow(() => verifyDelivery({ signature: undefined, grafana: { signature: timed, timestamp: String(now) } }, secret, body, now))
  t.doesNotThrow(() => verifyDelivery({ signature: undefined, sharedSecret: secret }, secret, body, now))
  t.doesNotThrow(() => verifyDelivery({ signature: undefined }, null, body, now), 'no secret, nothing to prove')
  const refused = [
    { signature: undefined },
    { signature: undefined, grafana: { signature: grafana.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } },
    { signature: undefined, grafana: { signature: timed, timestamp: String(now - SIGNATURE_TOLERANCE_SECONDS - 1) } },
    { signature: undefined, grafana: { signature: timed, timestamp: 'yesterday' } },
    { signature: undefined, sharedSecret: `${secret}!` },
    { signature: undefined, sharedSecret: '' },
    // Our signature, when sent, decides, even beside a right credential.
    { signature: 'sha256=' + '0'.repeat(64), sharedSecret: secret },
  ]
  for (const proof of refused)
    t.throws(() => verifyDelivery(proof, secret, body, now), { code: 'UNAUTHORIZED', statusCode: 401 }, JSON.stringify(proof))
})
