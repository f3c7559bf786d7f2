import { createHmac } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { ALERTMANAGER_BINARY, alertmanagerPresent, startAlertmanager, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Senders that cannot compute our signature (decision 0026): the key out of the URL, the secret as
// a credential, and Grafana's own signature.
const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'auth', {})
const owner = person('owner')

async function createConfig(payload: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: `/api/v1/organizations/${orgId}/webhooks`, headers: owner.headers, payload })
  if (response.statusCode !== 201) throw new Error(`config not created: ${response.body}`)
  return response.json() as { id: string; apiKey: string; signingSecret?: string }
}
const open = await createConfig({ name: 'Unsigned', format: 'generic' })
const signed = await createConfig({ name: 'Signed', format: 'generic', signed: true })
const secret = signed.signingSecret!

let sequence = 0
const event = () => JSON.stringify({ title: `Disk full ${++sequence}`, fingerprint: `disk-${sequence}`, status: 'firing' })
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: body })
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
const grafanaSignature = (body: string, timestamp?: string) =>
  createHmac('sha256', secret)
    .update(timestamp === undefined ? body : `${timestamp}:${body}`)
    .digest('hex')
const alertCount = async () =>
  Number(
    (
      await db
        .selectFrom('divinux.alerts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organizationId', '=', orgId)
        .executeTakeFirstOrThrow()
    ).n,
  )

t.test('the key need not be in the URL: Bearer or the Basic user name', async (t) => {
  t.equal((await post('/api/v1/webhooks/ingest', event(), { authorization: `Bearer ${open.apiKey}` })).statusCode, 202)
  t.equal((await post('/api/v1/webhooks/ingest', event(), { authorization: basic(open.apiKey, '') })).statusCode, 202)
  const before = await alertCount()
  const none = await post('/api/v1/webhooks/ingest', event())
  t.equal(none.statusCode, 401)
  t.match(none.json().message, /send the API key/)
  t.equal((await post('/api/v1/webhooks/ingest', event(), { authorization: 'Bearer whk_not-a-key' })).statusCode, 404)
  t.equal(await alertCount(), before, 'refusals store nothing')
})

t.test('a config with a secret takes the secret as the credential, and only its own', async (t) => {
  const keyed = `/api/v1/webhooks/ingest/${signed.apiKey}`
  t.equal((await post(keyed, event(), { authorization: `Bearer ${secret}` })).statusCode, 202, 'Bearer <secret> at the keyed path')
  t.equal((await post(keyed, event(), { authorization: basic('anyone', secret) })).statusCode, 202, 'or the Basic password')
  t.equal(
    (await post('/api/v1/webhooks/ingest', event(), { authorization: basic(signed.apiKey, secret) })).statusCode,
    202,
    'Basic <key>:<secret> with no key in the URL',
  )
  const before = await alertCount()
  const wrong = await post(keyed, event(), { authorization: `Bearer ${secret}x` })
  t.equal(wrong.statusCode, 401)
  t.match(wrong.json().message, /not this webhook’s secret/)
  t.equal((await post('/api/v1/webhooks/ingest', event(), { authorization: basic(signed.apiKey, 'guess') })).statusCode, 401)
  const bare = await post('/api/v1/webhooks/ingest', event(), { authorization: `Bearer ${signed.apiKey}` })
  t.equal(bare.statusCode, 401, 'the key alone does not open a config with a secret')
  t.match(bare.json().message, /requires proof of its secret/)
  t.equal((await post(keyed, event(), { authorization: `Bearer ${open.apiKey}` })).statusCode, 401, 'another config’s key is no secret')
  t.equal(await alertCount(), before)
})

t.test('Grafana’s signature: a bare hex digest, with or without its timestamp header', async (t) => {
  const keyed = `/api/v1/webhooks/ingest/${signed.apiKey}`
  const body = event()
  t.equal((await post(keyed, body, { 'x-grafana-alerting-signature': grafanaSignature(body) })).statusCode, 202)
  const now = String(Math.floor(Date.now() / 1000))
  const timed = event()
  t.equal(
    (
      await post(keyed, timed, {
        'x-grafana-alerting-signature': grafanaSignature(timed, now),
        'x-grafana-alerting-timestamp': now,
      })
    ).statusCode,
    202,
  )
  const before = await alertCount()
  const stale = String(Math.floor(Date.now() / 1000) - 600)
  const old = event()
  const replayed = await post(keyed, old, {
    'x-grafana-alerting-signature': grafanaSignature(old, stale),
    'x-grafana-alerting-timestamp': stale,
  })
  t.equal(replayed.statusCode, 401)
  t.match(replayed.json().message, /300-second tolerance/)
  const tampered = event()
  t.equal(
    (await post(keyed, tampered, { 'x-grafana-alerting-signature': grafanaSignature(body) })).statusCode,
    401,
    'another body’s digest',
  )
  t.equal(await alertCount(), before)
})

const haveAlertmanager = alertmanagerPresent()

t.test(
  'Alertmanager’s webhook_configs reach a config with a secret through basic_auth and authorization',
  { skip: haveAlertmanager ? false : `${ALERTMANAGER_BINARY} is not installed (apt-get install prometheus-alertmanager)` },
  async (t) => {
    const viaBasic = await createConfig({ name: 'Prometheus (basic)', format: 'alertmanager', signed: true })
    const viaBearer = await createConfig({ name: 'Prometheus (bearer)', format: 'alertmanager', signed: true })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1/webhooks/ingest`
    const { api } = await startAlertmanager(
      t,
      [
        'route:',
        '  receiver: basic',
        '  group_by: [alertname, via]',
        '  group_wait: 0s',
        '  group_interval: 1s',
        '  routes:',
        '    - matchers: [via="bearer"]',
        '      receiver: bearer',
        'receivers:',
        '  - name: basic',
        '    webhook_configs:',
        `      - url: ${base}`,
        '        http_config:',
        '          basic_auth:',
        `            username: ${viaBasic.apiKey}`,
        `            password: ${viaBasic.signingSecret}`,
        '  - name: bearer',
        '    webhook_configs:',
        `      - url: ${base}/${viaBearer.apiKey}`,
        '        http_config:',
        '          authorization:',
        '            type: Bearer',
        `            credentials: ${viaBearer.signingSecret}`,
      ].join('\n'),
    )
    const pushed = await fetch(`${api}/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        ['basic', 'bearer'].map((via) => ({
          labels: { alertname: 'ReplicationLag', severity: 'critical', via },
          annotations: { summary: 'Replica 2 lags' },
        })),
      ),
    })
    t.equal(pushed.status, 200)
    const fromConfig = (configId: string) =>
      db
        .selectFrom('divinux.alerts')
        .select(['status', 'priority'])
        .where('organizationId', '=', orgId)
        .where('configId', '=', configId)
        .executeTakeFirst()
    t.match(await until('the basic_auth delivery', () => fromConfig(viaBasic.id), 20_000), { status: 'open', priority: 'P1' })
    t.match(await until('the bearer delivery', () => fromConfig(viaBearer.id), 20_000), { status: 'open', priority: 'P1' })
  },
)
