import { createHmac } from 'node:crypto'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { buildApp as buildPlatform } from '@svc/platform'
import { startSmtpServer, startTestService } from '@svc/testkit'
import { buildApp as buildProduct } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Every log line of a full request cycle at the most verbose level, read back: no credential
// or message body may be in them, whatever the route logs or the framework adds.
const lines: string[] = []
const logDestination = { write: (line: string) => void lines.push(line) }
const smtp = await startSmtpServer(t)
const platform = await startTestService(t, buildPlatform, {
  config: { logLevel: 'trace', logDestination, reportsSigningKey: 'a report signing key of at least 32 characters' },
})
const product = await startTestService(t, buildProduct, {
  issuer: platform.issuer,
  config: {
    logLevel: 'trace',
    logDestination,
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, appUrl: 'https://app.example.com', retryDelaySeconds: 1 },
  },
})

const secrets: Record<string, string> = {}

t.test('a full request cycle', async (t) => {
  // Sign-in: the ID token in a body, then as a cookie and as a Bearer token.
  const idToken = platform.token('logs@example.com')
  secrets['ID token'] = idToken
  secrets['refresh token'] = 'refresh-token-that-must-not-be-logged'
  const session = await platform.app.inject({
    method: 'POST',
    url: '/auth/set-cookie',
    payload: { idToken, refreshToken: secrets['refresh token'] },
  })
  t.equal(session.statusCode, 200)
  const cookie = [session.headers['set-cookie']]
    .flat()
    .map((value) => String(value).split(';')[0])
    .join('; ')
  t.equal((await platform.app.inject({ method: 'GET', url: '/auth/me', headers: { cookie } })).statusCode, 200)
  t.equal((await platform.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${idToken}` } })).statusCode, 200)

  // SCIM with its token.
  const owner = await platform.signIn('scim-owner@example.com')
  const org = (
    await platform.app.inject({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: owner.headers,
      payload: { name: 'Logs', slug: 'logs' },
    })
  ).json() as { id: string }
  const scimToken = (
    await platform.app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/scim-tokens`,
      headers: owner.headers,
      payload: { name: 'idp' },
    })
  ).json().token as string
  secrets['SCIM token'] = scimToken
  const provisioned = await platform.app.inject({
    method: 'POST',
    url: '/api/v1/scim/v2/Users',
    headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
    payload: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'provisioned@example.com', active: true },
  })
  t.equal(provisioned.statusCode, 201)

  // Ingestion with the API key in the path and an HMAC signature.
  const { orgId, person } = await alertingOrganization(product, 'logs', {})
  const config = (
    await product.app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/webhooks`,
      headers: person('owner').headers,
      payload: { name: 'Logs', signed: true },
    })
  ).json() as { apiKey: string; ingestPath: string; signingSecret: string }
  secrets['webhook API key'] = config.apiKey
  secrets['webhook signing secret'] = config.signingSecret
  const body = JSON.stringify({ title: 'Logged alert' })
  const signature = `sha256=${createHmac('sha256', config.signingSecret).update(body).digest('hex')}`
  secrets['webhook signature'] = signature
  const ingested = await product.app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
    payload: body,
  })
  t.equal(ingested.statusCode, 202)

  // An e-mail through the outbox, delivered over SMTP.
  const invited = await product.app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/users/invite`,
    headers: person('owner').headers,
    payload: { email: 'invitee@logs.example' },
  })
  t.equal(invited.statusCode, 201)
  const messageId = invited.json().invitation.delivery.messageId as string
  let message
  for (;;) {
    message = await product.app.database.db.selectFrom('core.outbox').selectAll().where('id', '=', messageId).executeTakeFirstOrThrow()
    if (message.status !== 'pending') break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(message.status, 'sent')
  secrets['e-mail body'] = message.bodyText

  // A verification code to a number while no Twilio is configured: the message is held.
  const sms = await product.app.inject({
    method: 'POST',
    url: '/api/v1/users/me/contact-methods',
    headers: person('owner').headers,
    payload: { type: 'sms', address: '+4915112345678' },
  })
  t.match(sms.json(), { codeDelivery: { status: 'held' } })
  const held = await product.app.database.db
    .selectFrom('core.outbox')
    .select('bodyText')
    .where('kind', '=', 'contact.verification')
    .where('recipient', '=', '+4915112345678')
    .executeTakeFirstOrThrow()
  secrets['held SMS body'] = held.bodyText

  // A heartbeat pinged with its push token in the path.
  const heartbeat = await product.app.inject({
    method: 'POST',
    url: `/api/v1/synthetics/organizations/${orgId}/checks`,
    headers: person('owner').headers,
    payload: { name: 'Backup', kind: 'heartbeat', frequencySeconds: 3600, request: { graceSeconds: 300 } },
  })
  const pushPath = new URL(heartbeat.json().heartbeatUrl as string).pathname
  secrets['heartbeat push token'] = pushPath.split('/').at(-1)!
  t.equal((await product.app.inject({ method: 'POST', url: pushPath })).statusCode, 200)

  // A report link: its signature is a credential for 15 minutes.
  const report = await platform.app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${org.id}/reports/generate`,
    headers: owner.headers,
    payload: { type: 'audit-log', format: 'csv', from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() },
  })
  t.equal(report.statusCode, 202, report.body)
  let link
  for (;;) {
    link = await platform.app.inject({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/reports/${report.json().id}/download`,
      headers: owner.headers,
    })
    if (link.statusCode === 200) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const file = new URL(link.json().url as string)
  secrets['report link signature'] = file.searchParams.get('signature')!
  t.equal((await platform.app.inject({ method: 'GET', url: `${file.pathname}${file.search}` })).statusCode, 200)
})

t.test('no credential or message body is in the logs', async (t) => {
  const log = lines.join('')
  t.ok(lines.length > 20, `${lines.length} log lines were written`)
  t.match(log, /"url":"\/api\/v1\/webhooks\/ingest\/\[redacted\]"/, 'the ingest path is logged with its key redacted')
  for (const [what, secret] of Object.entries(secrets)) {
    t.ok(secret.length >= 16, `${what} is a real value`)
    t.notOk(log.includes(secret), `no ${what}`)
    // A secret cut short (a log truncating a header) still must not be there.
    t.notOk(log.includes(secret.slice(0, 24)), `no start of the ${what}`)
  }
})
