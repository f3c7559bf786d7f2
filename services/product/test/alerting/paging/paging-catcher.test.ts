import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// `pnpm start` without an e-mail provider: a page is captured for the newcomer to read, and the
// alert's notifications say so, instead of reporting a failure.
const service = await startTestService(t, buildApp, { config: { notifier: { ...DEFAULT_NOTIFIER_CONFIG, catchMessages: true } } })
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'catcher', { manager: 'manager', ada: 'responder' })
const [manager, ada] = [person('manager'), person('ada')]
const base = `/api/v1/organizations/${orgId}`
const post = async (url: string, payload: object) => {
  const response = await app.inject({ method: 'POST', url, headers: manager.headers, payload })
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}

t.test(
  'a page without an e-mail provider is captured, and its attempt reads captured; it goes to a verified e-mail contact method',
  async (t) => {
    const policy = await post(`${base}/escalation-policies`, {
      name: 'Direct',
      steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: ada.userId }] }],
    })
    const config = await post(`${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })
    const ingested = await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title: 'Checkout is down', service: 'checkout', priority: 'P3' }),
    })
    t.equal(ingested.statusCode, 202)
    const alertId = ingested.json().alertId as string
    const email = await until('the page to be captured', async () => {
      const listed = (await app.inject({ method: 'GET', url: `${base}/alerts/${alertId}/notifications`, headers: manager.headers })).json()
      return (listed.data as Array<{ channel: string; status: string; error: string | null; provider: string | null }>).find(
        (attempt) => attempt.channel === 'email' && attempt.status !== 'queued',
      )
    })
    t.match(email, { status: 'captured', error: null, provider: 'catcher' })
    const row = await app.database.db
      .selectFrom('core.outbox')
      .select(['status', 'subject'])
      .where('recipient', '=', 'ada@catcher.example')
      .executeTakeFirstOrThrow()
    t.same(row, { status: 'captured', subject: '[P3] Checkout is down' })

    // A verified e-mail contact method is where e-mail pages go; an unverified one never is.
    const methods = '/api/v1/users/me/contact-methods'
    const added = await app.inject({
      method: 'POST',
      url: methods,
      headers: ada.headers,
      payload: { type: 'email', address: 'Ada.Pager@example.com' },
    })
    t.equal(added.statusCode, 201)
    const secondAlert = async (title: string) => {
      const response = await app.inject({
        method: 'POST',
        url: config.ingestPath,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ title, service: title, priority: 'P3' }),
      })
      const pagedTo = await until(`the page of ${title}`, async () => {
        const listed = (
          await app.inject({ method: 'GET', url: `${base}/alerts/${response.json().alertId}/notifications`, headers: manager.headers })
        ).json()
        return (listed.data as Array<{ channel: string; recipient: string | null }>).find((attempt) => attempt.channel === 'email')
          ?.recipient
      })
      return pagedTo
    }
    t.equal(await secondAlert('unverified'), 'ada@catcher.example', 'not before it is verified')
    const code = await until('the verification code', async () => {
      const message = await app.database.db
        .selectFrom('core.outbox')
        .select('bodyText')
        .where('recipient', '=', 'ada.pager@example.com')
        .executeTakeFirst()
      return message && /\b(\d{6})\b/.exec(message.bodyText)?.[1]
    })
    const verified = await app.inject({
      method: 'POST',
      url: `${methods}/${added.json().id}/verify`,
      headers: ada.headers,
      payload: { code },
    })
    t.equal(verified.json().verified, true)
    t.equal(await secondAlert('verified'), 'ada.pager@example.com', 'then e-mail pages go there')
  },
)
