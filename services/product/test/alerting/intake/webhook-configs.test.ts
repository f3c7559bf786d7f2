import { createHash } from 'node:crypto'
import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'hooks', {
  manager: 'manager',
  responder: 'responder',
  viewer: 'viewer',
})
const [owner, manager, responder, viewer, stranger] = ['owner', 'manager', 'responder', 'viewer', 'stranger'].map(person)
const url = `/api/v1/organizations/${orgId}/webhooks`
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
const call = (who: { headers: { authorization: string } }, method: Method, path: string, payload?: Record<string, unknown>) =>
  app.inject({ method, url: `${url}${path}`, headers: who.headers, payload })
const stored = (id: string) => db.selectFrom('divinux.webhookConfigs').selectAll().where('id', '=', id).executeTakeFirst()
const actions = async (id: string) =>
  (await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', id).orderBy('createdAt').execute()).map(
    (entry) => entry.action,
  )

t.test('a created config answers its API key once; only the hash is kept', async (t) => {
  const response = await call(manager!, 'POST', '', { name: 'Prometheus', format: 'alertmanager', defaultPriority: 'P2' })
  t.equal(response.statusCode, 201)
  const body = response.json()
  t.match(body, {
    name: 'Prometheus',
    format: 'alertmanager',
    enabled: true,
    defaultPriority: 'P2',
    autoAnalysis: false,
    groupWindowSeconds: 300,
    signed: false,
    createdBy: manager!.userId,
    keyRotatedAt: null,
  })
  t.match(body.apiKey, /^whk_[A-Za-z0-9_-]{43}$/)
  t.equal(body.keyPrefix, body.apiKey.slice(0, 12))
  t.equal(body.ingestPath, `/api/v1/webhooks/ingest/${body.apiKey}`)
  t.notOk('signingSecret' in body)
  const row = await stored(body.id)
  t.equal(row?.apiKeyHash, createHash('sha256').update(body.apiKey).digest('hex'))
  t.notMatch(JSON.stringify(row), body.apiKey.slice(4), 'the key itself is nowhere in the row')
  const fetched = (await call(viewer!, 'GET', `/${body.id}`)).json()
  t.notOk('apiKey' in fetched, 'never answered again')
  t.same(await actions(body.id), ['webhook_config.created'])
  const audit = await db.selectFrom('core.auditLogs').select('changes').where('entityId', '=', body.id).executeTakeFirstOrThrow()
  t.notMatch(JSON.stringify(audit.changes), body.apiKey)
})

t.test('a signing secret is given (16 characters or more) or generated, and answered only when generated', async (t) => {
  const given = await call(owner!, 'POST', '', { name: 'Grafana', format: 'grafana', signingSecret: 'sixteen-chars-ok' })
  t.equal(given.statusCode, 201)
  t.equal(given.json().signed, true)
  t.notOk('signingSecret' in given.json())
  t.equal((await stored(given.json().id))?.signingSecret, 'sixteen-chars-ok')

  const generated = await call(manager!, 'POST', '', { name: 'Datadog', format: 'datadog', signed: true })
  t.match(generated.json(), { signed: true, signingSecret: /^whsec_[A-Za-z0-9_-]{43}$/ })
  t.equal((await stored(generated.json().id))?.signingSecret, generated.json().signingSecret)

  for (const payload of [
    { name: 'Short', signingSecret: 'too-short' },
    { name: 'Both', signingSecret: 'sixteen-chars-ok', signed: false },
    { name: '' },
    { name: 'Format', format: 'nagios' },
    { name: 'Priority', defaultPriority: 'P0' },
    { name: 'Window', groupWindowSeconds: 90_000 },
    { name: 'Unknown', apiKey: 'mine' },
  ]) {
    const response = await call(manager!, 'POST', '', payload)
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.equal(response.json().code, 'VALIDATION_FAILED')
  }
  t.equal(
    await db
      .selectFrom('divinux.webhookConfigs')
      .select('id')
      .where('name', 'in', ['Short', 'Both', 'Format', 'Priority', 'Window', 'Unknown'])
      .executeTakeFirst(),
    undefined,
    'nothing stored',
  )
})

t.test('list and get: every member reads, newest last, paginated', async (t) => {
  const listed = await call(viewer!, 'GET', '?limit=2')
  t.equal(listed.statusCode, 200)
  t.match(listed.json(), { meta: { page: 1, limit: 2, total: 3 } })
  t.same(
    listed.json().data.map((config: { name: string }) => config.name),
    ['Prometheus', 'Grafana'],
  )
  t.notMatch(JSON.stringify(listed.json()), /whk_[A-Za-z0-9_-]{20}/, 'no key in a list, only prefixes')
})

t.test('update changes settings, and can set or remove the signing secret', async (t) => {
  const { id } = (await call(manager!, 'POST', '', { name: 'Generic' })).json()
  const updated = await call(manager!, 'PATCH', `/${id}`, {
    name: 'Generic JSON',
    enabled: false,
    autoAnalysis: true,
    groupWindowSeconds: 60,
    signingSecret: 'a-new-secret-of-20ch',
  })
  t.equal(updated.statusCode, 200)
  t.match(updated.json(), { name: 'Generic JSON', enabled: false, autoAnalysis: true, groupWindowSeconds: 60, signed: true })
  t.notOk('signingSecret' in updated.json())
  t.equal((await call(manager!, 'PATCH', `/${id}`, { signingSecret: null })).json().signed, false)
  t.equal((await stored(id))?.signingSecret, null)
  t.equal((await call(manager!, 'PATCH', `/${id}`, {})).statusCode, 400, 'an empty change is refused')
  t.same(await actions(id), ['webhook_config.created', 'webhook_config.updated', 'webhook_config.updated'])
})

t.test('regenerating the key answers a new one and retires the old at once', async (t) => {
  const created = (await call(manager!, 'POST', '', { name: 'Rotating', signed: true })).json()
  const regenerated = await app.inject({ method: 'POST', url: `${url}/${created.id}/regenerate-key`, headers: manager!.headers })
  t.equal(regenerated.statusCode, 200)
  const body = regenerated.json()
  t.not(body.apiKey, created.apiKey)
  t.ok(body.keyRotatedAt)
  t.notOk('signingSecret' in body, 'the secret stays unless asked')
  const row = await stored(created.id)
  t.equal(row?.apiKeyHash, createHash('sha256').update(body.apiKey).digest('hex'))
  t.equal(
    await db
      .selectFrom('divinux.webhookConfigs')
      .select('id')
      .where('apiKeyHash', '=', createHash('sha256').update(created.apiKey).digest('hex'))
      .executeTakeFirst(),
    undefined,
  )
  t.equal(row?.signingSecret, created.signingSecret)

  const withSecret = await app.inject({
    method: 'POST',
    url: `${url}/${created.id}/regenerate-key?rotateSigningSecret=true`,
    headers: manager!.headers,
  })
  t.match(withSecret.json(), { signingSecret: /^whsec_/ })
  t.not(withSecret.json().signingSecret, created.signingSecret)
  t.equal((await stored(created.id))?.signingSecret, withSecret.json().signingSecret)
  t.same(await actions(created.id), ['webhook_config.created', 'webhook_config.key_regenerated', 'webhook_config.key_regenerated'])
})

t.test('changing configs needs the alerting role manager; reading needs membership', async (t) => {
  const { id } = (await call(manager!, 'POST', '', { name: 'Guarded' })).json()
  for (const who of [responder!, viewer!]) {
    t.equal((await call(who, 'POST', '', { name: 'Nope' })).statusCode, 403)
    t.equal((await call(who, 'PATCH', `/${id}`, { name: 'Nope' })).statusCode, 403)
    t.equal((await call(who, 'DELETE', `/${id}`)).statusCode, 403)
    t.equal((await app.inject({ method: 'POST', url: `${url}/${id}/regenerate-key`, headers: who.headers })).statusCode, 403)
    t.equal((await call(who, 'GET', `/${id}`)).statusCode, 200)
  }
  t.equal((await app.inject({ method: 'GET', url })).statusCode, 401)
  t.equal((await stored(id))?.name, 'Guarded')
})

t.test("another organization's config is a 404, and so is a malformed id", async (t) => {
  const { id } = (await call(manager!, 'POST', '', { name: 'Ours' })).json()
  const theirs = `/api/v1/organizations/${otherOrgId}/webhooks`
  t.equal((await call(stranger!, 'GET', `/${id}`)).statusCode, 404, 'not a member of ours')
  for (const [method, path] of [
    ['GET', `/${id}`],
    ['PATCH', `/${id}`],
    ['DELETE', `/${id}`],
    ['POST', `/${id}/regenerate-key`],
  ] as const) {
    const response = await app.inject({
      method,
      url: `${theirs}${path}`,
      headers: stranger!.headers,
      payload: method === 'PATCH' ? { name: 'Hijacked' } : undefined,
    })
    t.equal(response.statusCode, 404, `${method} through their organization`)
  }
  t.equal((await call(manager!, 'GET', '/not-a-uuid')).statusCode, 404)
  t.equal((await stored(id))?.name, 'Ours')
  t.equal((await app.inject({ method: 'GET', url: theirs, headers: stranger!.headers })).json().meta.total, 0)
})

t.test('delete removes the config and is audited', async (t) => {
  const { id } = (await call(manager!, 'POST', '', { name: 'Doomed' })).json()
  t.equal((await call(manager!, 'DELETE', `/${id}`)).statusCode, 204)
  t.equal(await stored(id), undefined)
  t.equal((await call(manager!, 'DELETE', `/${id}`)).statusCode, 404)
  t.same(await actions(id), ['webhook_config.created', 'webhook_config.deleted'])
})
