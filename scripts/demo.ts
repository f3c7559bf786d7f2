// `pnpm demo`: seeds a realistic organization into the running `pnpm start` through its APIs,
// as a person would with curl (docs/quickstart.md), and prints where to look: two people (one
// invited, accepting from the captured e-mail), a team, a weekly schedule, an escalation policy,
// an alert source, a status page with components, a check against the platform's own health
// endpoint, and an alert that pages someone and opens an incident with an analysis.
import { randomBytes } from 'node:crypto'
import { readEnvironment } from '@svc/config'
import { DEV_OUTBOX_PATH, exitOnConfigurationError } from '@svc/runtime'
import { environmentOfRunningSystem, runningDevSystem } from './dev-system.js'
import { openDevIdentityProvider } from './embedded-identity.js'

const system = runningDevSystem()
if (!system) {
  console.error('no running `pnpm start` was found: start it in another terminal first')
  process.exit(1)
}
const env = environmentOfRunningSystem(exitOnConfigurationError(() => readEnvironment()))
const platform = `http://localhost:${env.PLATFORM_PORT}`
const product = `http://localhost:${env.PRODUCT_PORT}`
const idp = await openDevIdentityProvider(env)

type Json = Record<string, unknown>

/** One call of the APIs; anything but the expected answer stops the demo with what was said. */
async function call<T = Json>(token: string | null, method: string, url: string, body?: unknown, expected = [200, 201, 202]): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (!expected.includes(response.status)) throw new Error(`${method} ${url}: ${response.status} ${text}`)
  return (text ? JSON.parse(text) : {}) as T
}

/** Polls until `read` answers something, for what the system does in the background. */
async function eventually<T>(what: string, read: () => Promise<T | undefined | false>, seconds = 30): Promise<T> {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const value = await read()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${seconds} s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

const suffix = randomBytes(3).toString('hex')
const alice = { email: `alice+${suffix}@acme.example` }
const bob = { email: `bob+${suffix}@acme.example` }
const aliceToken = idp.mintIdToken({ email: alice.email, groups: [] })
const bobToken = idp.mintIdToken({ email: bob.email, groups: [] })
const step = (words: string) => console.log(`· ${words}`)

step(`organization "Acme ${suffix}", owned by ${alice.email}`)
const organization = await call<{ id: string }>(aliceToken, 'POST', `${platform}/api/v1/organizations`, {
  name: `Acme ${suffix}`,
  slug: `acme-${suffix}`,
})
const orgId = organization.id
const aliceId = (await call<{ userId: string }>(aliceToken, 'GET', `${platform}/api/v1/users/me`)).userId

step(`${bob.email} invited as a responder, accepting the link captured in the outbox`)
await call(aliceToken, 'POST', `${platform}/api/v1/organizations/${orgId}/invitations`, {
  email: bob.email,
  role: 'member',
  productRoles: { alerting: 'responder', statuspages: 'responder', synthetics: 'viewer', insights: 'viewer' },
})
const invitationToken = await eventually('the invitation e-mail', async () => {
  const outbox = await call<{ data: Array<{ recipient: string; text: string }> }>(
    null,
    'GET',
    `${platform}${DEV_OUTBOX_PATH}.json?limit=50`,
  )
  const mail = outbox.data.find((message) => message.recipient === bob.email)
  return mail && /inv_[A-Za-z0-9_-]+/.exec(mail.text)?.[0]
})
await call(bobToken, 'POST', `${platform}/api/v1/invitations/accept`, { token: invitationToken })
const bobId = (await call<{ userId: string }>(bobToken, 'GET', `${platform}/api/v1/users/me`)).userId

const alerting = `${product}/api/v1/organizations/${orgId}`
step('team "Payments", schedule "Primary" (weekly, Bob then Alice) and policy "Default"')
const team = await call<{ id: string }>(aliceToken, 'POST', `${alerting}/teams`, {
  name: 'Payments',
  members: [
    { userId: bobId, role: 'responder' },
    { userId: aliceId, role: 'responder' },
  ],
})
const schedule = await call<{ id: string }>(aliceToken, 'POST', `${alerting}/schedules`, {
  name: 'Primary',
  timeZone: 'UTC',
  layers: [
    {
      name: 'Weekly',
      start: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
      handoffTime: '09:00',
      turn: { length: 1, unit: 'weeks' },
      users: [bobId, aliceId],
    },
  ],
})
const policy = await call<{ id: string }>(aliceToken, 'POST', `${alerting}/escalation-policies`, {
  name: 'Default',
  steps: [
    { delayMinutes: 5, targets: [{ type: 'schedule', id: schedule.id }] },
    { delayMinutes: 10, targets: [{ type: 'team', id: team.id }] },
  ],
})
const source = await call<{ ingestPath: string }>(aliceToken, 'POST', `${alerting}/webhooks`, {
  name: 'Monitoring',
  escalationPolicyId: policy.id,
})

step('status page with the components "API" and "Checkout", published')
const pages = `${product}/api/v1/statuspages/organizations/${orgId}/pages`
const page = await call<{ id: string; publicUrl: string }>(aliceToken, 'POST', pages, {
  name: `Acme ${suffix}`,
  slug: `acme-${suffix}`,
  published: true,
  locales: ['en', 'de'],
})
const api = await call<{ id: string }>(aliceToken, 'POST', `${pages}/${page.id}/components`, { name: 'API', alertServices: ['api'] })
await call(aliceToken, 'POST', `${pages}/${page.id}/components`, { name: 'Checkout', alertServices: ['checkout'] })

step('a check of the platform API’s health, run once now (every minute after)')
const checks = `${product}/api/v1/synthetics/organizations/${orgId}/checks`
const check = await call<{ id: string }>(aliceToken, 'POST', checks, {
  name: 'Platform health',
  kind: 'http',
  frequencySeconds: 60,
  request: { url: `http://127.0.0.1:${env.PLATFORM_PORT}/api/v1/health` },
  statusComponentIds: [api.id],
})
await call(aliceToken, 'POST', `${checks}/${check.id}/run`)

step('a P2 alert on "checkout": it pages whoever is on call, opens an incident and is investigated')
const alert = await call<{ alertId: string }>(null, 'POST', `${product}${source.ingestPath}`, {
  title: 'Checkout error rate above 5%',
  service: 'checkout',
  priority: 'P2',
  description: 'HTTP 5xx on POST /checkout rose from 0.1% to 6.3% in five minutes.',
})
const incident = await eventually('the incident', async () => {
  const open = await call<{ data: Array<{ id: string; reference: string }> }>(aliceToken, 'GET', `${alerting}/incidents?status=open`)
  return open.data[0]
})
await eventually('the page to be sent', async () => {
  const sent = await call<{ data: Array<{ status: string }> }>(aliceToken, 'GET', `${alerting}/alerts/${alert.alertId}/notifications`)
  return sent.data.some((attempt) => attempt.status !== 'queued')
})

const token = (email: string) => `pnpm -s token ${email}`
console.log(`
Seeded. Where to look:
  the page, as e-mailed     ${platform}${DEV_OUTBOX_PATH}   (or \`pnpm outbox\`)
  the status page           ${page.publicUrl}   (?locale=de in German)
  the incident              ${incident.reference}: curl -s ${alerting}/incidents/${incident.id}/command-room -H "authorization: Bearer $(${token(alice.email)})"
  who was paged             curl -s ${alerting}/alerts/${alert.alertId}/notifications -H "authorization: Bearer $(${token(alice.email)})"
  the check's results       curl -s ${checks}/${check.id}/results -H "authorization: Bearer $(${token(alice.email)})"
  the API references        ${platform}/docs   ${product}/docs
Sign in as ${alice.email} (owner) or ${bob.email} (responder): \`${token(alice.email)}\`.
`)
