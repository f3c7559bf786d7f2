import { execFile } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const { orgId, otherOrgId, person } = await alertingOrganization(service, 'deploys', { viewer: 'viewer' })
const [owner, viewer, stranger] = ['owner', 'viewer', 'stranger'].map(person)

async function createConfig(organization: string, who: { headers: { authorization: string } }, payload: Record<string, unknown>) {
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${organization}/webhooks`,
    headers: who.headers,
    payload,
  })
  if (response.statusCode !== 201) throw new Error(`config not created: ${response.body}`)
  return response.json() as { id: string; apiKey: string; ingestPath: string; signingSecret?: string }
}
const ci = await createConfig(orgId, owner!, { name: 'CI', signed: true })
const theirs = await createConfig(otherOrgId, stranger!, { name: 'Their CI' })
const disabled = await createConfig(orgId, owner!, { name: 'Off', enabled: false })

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
const deployUrl = (key: string, organization = orgId) => `/api/v1/organizations/${organization}/deploy-events/ingest/${key}`
const post = (url: string, body: unknown, secret = ci.signingSecret ?? '') => {
  const payload = JSON.stringify(body)
  return app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'x-webhook-signature': sign(secret, payload) },
    payload,
  })
}
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString()
const stored = async () =>
  Number(
    (
      await db
        .selectFrom('divinux.deployEvents')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

t.test('a generic deploy event is stored with the time it happened', async (t) => {
  const finishedAt = minutesAgo(10)
  const response = await post(deployUrl(ci.apiKey), {
    service: 'checkout',
    environment: 'production',
    version: '2.4.1',
    commit: 'abc123',
    repository: 'acme/checkout',
    url: 'https://deploys.example/42',
    status: 'success',
    startedAt: minutesAgo(14),
    finishedAt,
  })
  t.equal(response.statusCode, 201)
  t.match(response.json(), {
    source: 'generic',
    service: 'checkout',
    environment: 'production',
    version: '2.4.1',
    commitSha: 'abc123',
    status: 'success',
    configId: ci.id,
    deployedAt: finishedAt,
    finishedAt,
  })
})

t.test('a GitHub deployment_status payload', async (t) => {
  const response = await post(deployUrl(ci.apiKey), {
    action: 'created',
    deployment_status: { state: 'success', environment: 'staging', target_url: 'https://github.example/run/1', created_at: minutesAgo(3) },
    deployment: { sha: 'def456', ref: 'v2.5.0', environment: 'staging', created_at: minutesAgo(5), payload: {} },
    repository: { name: 'search', full_name: 'acme/search' },
  })
  t.equal(response.statusCode, 201)
  t.match(response.json(), {
    source: 'github',
    service: 'search',
    environment: 'staging',
    version: 'v2.5.0',
    commitSha: 'def456',
    repository: 'acme/search',
    url: 'https://github.example/run/1',
    status: 'success',
  })
})

t.test('refused deploy events store nothing', async (t) => {
  const before = await stored()
  const cases: Array<[string, Promise<{ statusCode: number }>, number]> = [
    ["another organization's key", post(deployUrl(theirs.apiKey), { service: 'x' }), 404],
    ['a key used under another organization', post(deployUrl(ci.apiKey, otherOrgId), { service: 'x' }), 404],
    ['an unknown key', post(deployUrl('whk_unknown'), { service: 'x' }), 404],
    ['a disabled config', post(deployUrl(disabled.apiKey), { service: 'x' }), 404],
    ['a malformed organization id', post(deployUrl(ci.apiKey, 'nope'), { service: 'x' }), 404],
    ['a wrong signature', post(deployUrl(ci.apiKey), { service: 'x' }, 'not-the-secret-at-all'), 401],
    ['no service', post(deployUrl(ci.apiKey), { environment: 'production' }), 400],
    ['an unknown status', post(deployUrl(ci.apiKey), { service: 'x', status: 'exploded' }), 400],
    ['a bad date', post(deployUrl(ci.apiKey), { service: 'x', finishedAt: 'yesterday' }), 400],
    [
      'a GitHub payload without a service',
      post(deployUrl(ci.apiKey), { deployment_status: { state: 'success' }, deployment: {}, repository: {} }),
      400,
    ],
  ]
  for (const [what, response, status] of cases) t.equal((await response).statusCode, status, what)
  t.equal(await stored(), before)
})

t.test('listing deploy events with filters, for viewers of this organization only', async (t) => {
  await post(deployUrl(ci.apiKey), { service: 'checkout', environment: 'production', status: 'failure', finishedAt: minutesAgo(30) })
  const list = async (query: string, who = viewer!) =>
    (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/deploy-events${query}`, headers: who.headers })).json()
  t.same(
    (await list('?service=checkout')).data.map((deploy: { status: string }) => deploy.status),
    ['success', 'failure'],
    'newest first',
  )
  t.equal((await list('?environment=staging')).meta.total, 1)
  t.equal((await list('?status=failure')).meta.total, 1)
  t.equal((await list(`?from=${minutesAgo(20)}`)).meta.total, 2)
  t.equal((await list(`?to=${minutesAgo(20)}`)).meta.total, 1)
  const strangers = await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/deploy-events`, headers: stranger!.headers })
  t.equal(strangers.statusCode, 404)
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/deploy-events?status=exploded`, headers: viewer!.headers }))
      .statusCode,
    400,
  )
})

t.test('the command room of a P1 alert names the deploy that preceded it', async (t) => {
  await post(deployUrl(ci.apiKey), { service: 'checkout', version: 'too-old', finishedAt: minutesAgo(200) })
  await post(deployUrl(ci.apiKey), { service: 'payments', version: 'other-service', finishedAt: minutesAgo(5) })
  const alerts = await createConfig(orgId, owner!, { name: 'Alerts' })
  const fired = await app.inject({
    method: 'POST',
    url: alerts.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: { title: 'Checkout 500s', service: 'checkout', priority: 'critical' },
  })
  const { alertId } = fired.json()
  await post(deployUrl(ci.apiKey), {
    service: 'checkout',
    version: 'after-the-alert',
    finishedAt: new Date(Date.now() + 60_000).toISOString(),
  })

  const room = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/alerts/${alertId}/command-room`,
    headers: viewer!.headers,
  })
  t.equal(room.statusCode, 200)
  const body = room.json()
  t.match(body, { alert: { id: alertId, priority: 'P1' }, windowMinutes: 120, timeline: [{ type: 'created' }] })
  t.same(
    body.deploys.map((deploy: { version: string | null; status: string }) => [deploy.version, deploy.status]),
    [
      ['2.4.1', 'success'],
      [null, 'failure'],
    ],
    'the deploys of checkout in the two hours before, newest first',
  )
  const wider = (
    await app.inject({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/alerts/${alertId}/command-room?windowMinutes=300`,
      headers: viewer!.headers,
    })
  ).json()
  t.ok(wider.deploys.some((deploy: { version: string }) => deploy.version === 'too-old'))

  const minor = (
    await app.inject({
      method: 'POST',
      url: alerts.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: { title: 'Slow page', priority: 'P4' },
    })
  ).json()
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: `/api/v1/organizations/${orgId}/alerts/${minor.alertId}/command-room`,
        headers: viewer!.headers,
      })
    ).statusCode,
    404,
    'a P4 alert has no command room',
  )
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: `/api/v1/organizations/${otherOrgId}/alerts/${alertId}/command-room`,
        headers: stranger!.headers,
      })
    ).statusCode,
    404,
  )
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/alerts/nope/command-room`, headers: viewer!.headers }))
      .statusCode,
    404,
  )
})

t.test('a deploy dated more than 5 minutes ahead is refused; a little clock drift is not', async (t) => {
  const before = await stored()
  const ahead = new Date(Date.now() + 10 * 60_000).toISOString()
  const refused = await post(deployUrl(ci.apiKey), { service: 'checkout', finishedAt: ahead })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /finishedAt is more than 5 minutes in the future/)
  t.equal(await stored(), before, 'nothing stored')
  t.equal(
    (await post(deployUrl(ci.apiKey), { service: 'checkout', finishedAt: new Date(Date.now() + 60_000).toISOString() })).statusCode,
    201,
  )
})

t.test('a repeated delivery id is processed once and answered with the first event', async (t) => {
  const body = JSON.stringify({ service: 'billing', finishedAt: minutesAgo(1) })
  const deliver = () =>
    app.inject({
      method: 'POST',
      url: deployUrl(ci.apiKey),
      headers: {
        'content-type': 'application/json',
        'x-webhook-signature': sign(ci.signingSecret ?? '', body),
        'x-github-delivery': 'delivery-77',
      },
      payload: body,
    })
  const before = await stored()
  const first = await deliver()
  t.equal(first.statusCode, 201)
  const again = await deliver()
  t.equal(again.statusCode, 200)
  t.equal(again.json().id, first.json().id)
  t.equal(await stored(), before + 1)
})

t.test('a pipeline that cannot sign presents the secret, and keeps the key out of the URL (decision 0026)', async (t) => {
  const payload = JSON.stringify({ service: 'billing', environment: 'production', finishedAt: minutesAgo(1) })
  const send = (url: string, authorization?: string) =>
    app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      payload,
    })
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
  const keyless = `/api/v1/organizations/${orgId}/deploy-events/ingest`
  const unsigned = await createConfig(orgId, owner!, { name: 'Unsigned CI' })
  const before = await stored()
  t.equal(
    (await send(keyless, basic(ci.apiKey, ci.signingSecret!))).statusCode,
    201,
    'the key as the Basic user, the secret as its password',
  )
  t.equal((await send(deployUrl(ci.apiKey), `Bearer ${ci.signingSecret}`)).statusCode, 201, 'the secret as Bearer at the keyed path')
  t.equal((await send(keyless, `Bearer ${unsigned.apiKey}`)).statusCode, 201, 'the key as Bearer, for a config without a secret')
  t.equal(await stored(), before + 3)
  const refused: Array<[Promise<{ statusCode: number }>, number, string]> = [
    [send(keyless), 401, 'no key'],
    [send(keyless, basic(ci.apiKey, 'not-the-secret')), 401, 'a wrong secret'],
    [send(keyless, `Bearer ${ci.apiKey}`), 401, 'the key alone, for a config with a secret'],
    [send(deployUrl(ci.apiKey)), 401, 'no proof of the secret'],
    [send(keyless, basic(theirs.apiKey, '')), 404, 'another organization’s key'],
    [send(keyless, `Bearer ${disabled.apiKey}`), 404, 'a disabled config'],
  ]
  for (const [response, status, what] of refused) t.equal((await response).statusCode, status, what)
  t.equal(await stored(), before + 3, 'a refusal stores nothing')
})

const CURL = '/usr/bin/curl'
t.test(
  'curl, as a CI job runs it: `curl -u key:secret`, no key in the URL',
  { skip: !existsSync(CURL) && process.env.CI !== 'true' && `${CURL} is not installed (apt-get install -y curl)` },
  async (t) => {
    if (!existsSync(CURL)) return t.fail(`${CURL} is not installed: .ci/run installs it, and CI does not skip this check`)
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const before = await stored()
    const { stdout } = await promisify(execFile)(CURL, [
      '--silent',
      '--show-error',
      '--user',
      `${ci.apiKey}:${ci.signingSecret}`,
      '--header',
      'content-type: application/json',
      '--data',
      JSON.stringify({ service: 'ledger', version: '7.1.0', environment: 'production' }),
      '--output',
      '/dev/null',
      '--write-out',
      '%{http_code}',
      `${address}/api/v1/organizations/${orgId}/deploy-events/ingest`,
    ])
    t.equal(stdout, '201')
    t.equal(await stored(), before + 1)
  },
)
