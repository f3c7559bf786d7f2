import { createHash } from 'node:crypto'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { createNotifier } from '@svc/notifier'
import type { FastifyInstance } from 'fastify'
import type { ServiceConfig } from '@svc/config'
import { platformSurface } from '@svc/plugin-platform'
import { buildServiceApp, type Resources } from '@svc/runtime'
import { acceptInvitationOf, startTestService } from '@svc/testkit'

// The platform surface plus one SCIM-authenticated route that reports who the token is, so
// the SCIM token rule is tested the way SCIM routes will use it.
async function surfaces(app: FastifyInstance): Promise<void> {
  await app.register(platformSurface, {
    statusPages: async () => ({ rows: [], total: 0 }),
    checks: async () => ({ rows: [], total: 0 }),
    reportSources: {
      incidents: async () => {
        const none = { incidents: 0, acknowledged: 0, resolved: 0, mttaSeconds: null, mttrSeconds: null }
        return { totals: none, bySeverity: [], byService: [], perDay: [], rows: [], alertsReceived: 0 }
      },
      componentUptime: async () => ({ partialOutageWeight: 0.3, components: [] }),
      checkAvailability: async () => [],
      aiUsage: async () => ({ totals: { requests: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 }, byModel: [], perDay: [] }),
    },
    notifier: createNotifier({ jobs: app.jobs, database: app.database, config: DEFAULT_NOTIFIER_CONFIG, log: app.log }),
  })
  app.get('/api/v1/scim/v2/Me', { config: { scim: true } }, async (request) => request.scim)
}
const build = (config: ServiceConfig, shared?: Resources) =>
  buildServiceApp(config, { name: 'platform', title: 'Platform API', description: 'with a SCIM probe', probes: true, surfaces }, shared)

const service = await startTestService(t, build)
const { app } = service
const db = app.database.db

const owner = await service.signIn('owner@scim.example')
const admin = await service.signIn('admin@scim.example')
const member = await service.signIn('member@scim.example')
const stranger = await service.signIn('owner@elsewhere.example')
const { id: orgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'SCIM', slug: 'scim' } })
).json()
const { id: otherOrgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: stranger.headers, payload: { name: 'Else', slug: 'else' } })
).json()
for (const [user, role] of [
  [admin, 'admin'],
  [member, 'member'],
] as const) {
  await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/members`,
    headers: owner.headers,
    payload: { email: user.email, role },
  })
  await acceptInvitationOf(app, user)
}
const tokensUrl = `/api/v1/organizations/${orgId}/scim-tokens`

async function createToken(name: string) {
  const response = await app.inject({ method: 'POST', url: tokensUrl, headers: admin.headers, payload: { name } })
  t.equal(response.statusCode, 201)
  return response.json() as { id: string; token: string; prefix: string }
}
const scimCall = (token: string) => app.inject({ method: 'GET', url: '/api/v1/scim/v2/Me', headers: { authorization: `Bearer ${token}` } })

t.test('a created token is shown once; only its SHA-256 hash is stored', async (t) => {
  const created = await createToken('Okta production')
  t.match(created, { name: 'Okta production', revokedAt: null, lastUsedAt: null, createdBy: admin.userId })
  t.match(created.token, /^scim_[A-Za-z0-9_-]{43}$/)
  t.equal(created.prefix, created.token.slice(0, 12))
  const row = await db.selectFrom('core.scimTokens').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()
  t.equal(row.tokenHash, createHash('sha256').update(created.token).digest('hex'))
  t.notMatch(JSON.stringify(row), created.token)
  const listed = await app.inject({ method: 'GET', url: tokensUrl, headers: owner.headers })
  t.equal(listed.statusCode, 200)
  t.same(Object.keys(listed.json().data[0]).sort(), [
    'createdAt',
    'createdBy',
    'expiresAt',
    'id',
    'lastUsedAt',
    'name',
    'prefix',
    'revokedAt',
  ])
  const audit = await db.selectFrom('core.auditLogs').select(['action', 'changes']).where('entityId', '=', created.id).execute()
  t.same(
    audit.map((entry) => entry.action),
    ['scim_token.created'],
  )
  t.notMatch(JSON.stringify(audit), created.token, 'the audit log never holds the token')
})

t.test('a SCIM token authenticates SCIM routes for its own organization, and records its use', async (t) => {
  const { id, token } = await createToken('Entra ID')
  const response = await scimCall(token)
  t.equal(response.statusCode, 200)
  t.same(response.json(), { tokenId: id, organizationId: orgId, creatorRole: 'admin' })
  const row = await db.selectFrom('core.scimTokens').select('lastUsedAt').where('id', '=', id).executeTakeFirstOrThrow()
  t.ok(row.lastUsedAt)
})

t.test('revoking fails SCIM authentication at once; revoking again keeps the first time', async (t) => {
  const { id, token } = await createToken('to revoke')
  t.equal((await scimCall(token)).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `${tokensUrl}/${id}`, headers: owner.headers })).statusCode, 204)
  const refused = await scimCall(token)
  t.equal(refused.statusCode, 401)
  t.equal(refused.json().code, 'UNAUTHORIZED')
  const first = (await db.selectFrom('core.scimTokens').select('revokedAt').where('id', '=', id).executeTakeFirstOrThrow()).revokedAt
  t.ok(first)
  t.equal((await app.inject({ method: 'DELETE', url: `${tokensUrl}/${id}`, headers: owner.headers })).statusCode, 204)
  t.same((await db.selectFrom('core.scimTokens').select('revokedAt').where('id', '=', id).executeTakeFirstOrThrow()).revokedAt, first)
  const listed = (await app.inject({ method: 'GET', url: tokensUrl, headers: owner.headers })).json().data
  t.equal(listed.find((entry: { id: string }) => entry.id === id).revokedAt, first?.toISOString())
  t.equal(
    (await app.inject({ method: 'DELETE', url: `${tokensUrl}/00000000-0000-4000-8000-000000000000`, headers: owner.headers })).statusCode,
    404,
  )
})

t.test('credentials do not cross: identity tokens on SCIM, SCIM tokens anywhere else', async (t) => {
  const { token } = await createToken('crossing')
  t.equal((await scimCall(owner.token)).statusCode, 401, 'an ID token is not a SCIM token')
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/scim/v2/Me', cookies: { svc_id_token: owner.token } })).statusCode,
    401,
    'nor is a session cookie',
  )
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/scim/v2/Me' })).statusCode, 401)
  for (const url of ['/api/v1/users/me', `/api/v1/organizations/${orgId}`, tokensUrl, '/auth/me']) {
    t.equal((await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).statusCode, 401, url)
  }
})

t.test('tokens are managed by admins and owners of the organization only', async (t) => {
  const { id } = await createToken('guarded')
  t.equal((await app.inject({ method: 'GET', url: tokensUrl, headers: member.headers })).statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url: tokensUrl, headers: member.headers, payload: { name: 'x' } })).statusCode, 403)
  t.equal((await app.inject({ method: 'DELETE', url: `${tokensUrl}/${id}`, headers: member.headers })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: tokensUrl, headers: stranger.headers })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: `${tokensUrl}/${id}`, headers: stranger.headers })).statusCode, 404)
  // Through the stranger's own organization, this organization's token id is not found either.
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/v1/organizations/${otherOrgId}/scim-tokens/${id}`, headers: stranger.headers }))
      .statusCode,
    404,
  )
  t.equal((await db.selectFrom('core.scimTokens').select('revokedAt').where('id', '=', id).executeTakeFirstOrThrow()).revokedAt, null)
  t.equal((await app.inject({ method: 'POST', url: tokensUrl, headers: admin.headers, payload: { name: '' } })).statusCode, 400)
})

t.test('the SCIM rule cannot be declared outside the SCIM base path', async (t) => {
  const misplaced = async (app: FastifyInstance) => {
    app.get('/api/v1/users/sneaky', { config: { scim: true } }, async () => ({}))
  }
  await t.rejects(
    startTestService(t, (config, shared) =>
      buildServiceApp(config, { name: 'platform', title: 'x', description: 'x', surfaces: misplaced }, shared),
    ),
    /SCIM tokens authenticate only routes under \/api\/v1\/scim\/v2/,
  )
})

t.test('a token expires at its expiresAt, and stops when its creator leaves or loses admin', async (t) => {
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: tokensUrl,
        headers: admin.headers,
        payload: { name: 'past', expiresAt: '2020-01-01T00:00:00Z' },
      })
    ).statusCode,
    400,
  )
  const expiring = (
    await app.inject({
      method: 'POST',
      url: tokensUrl,
      headers: admin.headers,
      payload: { name: 'expiring', expiresAt: new Date(Date.now() + 60_000).toISOString() },
    })
  ).json()
  t.equal((await scimCall(expiring.token)).statusCode, 200)
  await db
    .updateTable('core.scimTokens')
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where('id', '=', expiring.id)
    .execute()
  t.equal((await scimCall(expiring.token)).statusCode, 401, 'past its end')

  const colleague = await service.signIn('colleague@scim.example')
  const added = (
    await app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/members`,
      headers: owner.headers,
      payload: { email: colleague.email, role: 'admin' },
    })
  ).json()
  await acceptInvitationOf(app, colleague)
  const minted = (await app.inject({ method: 'POST', url: tokensUrl, headers: colleague.headers, payload: { name: 'colleague' } })).json()
  t.equal((await scimCall(minted.token)).statusCode, 200)
  t.equal(
    (
      await app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${orgId}/members/${added.id}`,
        headers: owner.headers,
        payload: { role: 'member' },
      })
    ).statusCode,
    200,
  )
  t.equal((await scimCall(minted.token)).statusCode, 401, 'its creator is no longer an admin')
  t.equal(
    (
      await app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${orgId}/members/${added.id}`,
        headers: owner.headers,
        payload: { role: 'admin' },
      })
    ).statusCode,
    200,
  )
  t.equal((await scimCall(minted.token)).statusCode, 200, 'admin again')
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/v1/organizations/${orgId}/members/${added.id}`, headers: owner.headers })).statusCode,
    204,
  )
  t.equal((await scimCall(minted.token)).statusCode, 401, 'its creator left')
})

t.test("an admin's token cannot change, suspend or deprovision an owner; an owner's can", async (t) => {
  const adminToken = (await createToken('admin-minted')).token
  const ownerToken = (
    await app.inject({ method: 'POST', url: tokensUrl, headers: owner.headers, payload: { name: 'owner-minted' } })
  ).json().token as string
  const ownerMember = (
    await db
      .selectFrom('core.organizationMembers')
      .select('id')
      .where('organizationId', '=', orgId)
      .where('userId', '=', owner.userId)
      .executeTakeFirstOrThrow()
  ).id
  const scim = (token: string, method: 'PATCH' | 'DELETE' | 'PUT', payload?: unknown) =>
    app.inject({
      method,
      url: `/api/v1/scim/v2/Users/${ownerMember}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      payload: payload === undefined ? undefined : JSON.stringify(payload),
    })
  const suspend = {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'active', value: false }],
  }
  const retitle = {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'title', value: 'Founder' }],
  }
  for (const [method, payload] of [
    ['PATCH', suspend],
    ['PATCH', retitle],
    ['PUT', { userName: owner.email, active: false }],
    ['DELETE', undefined],
  ] as const) {
    const refused = await scim(adminToken, method, payload)
    t.equal(refused.statusCode, 403, method)
    t.match(refused.json(), { scimType: 'mutability', status: '403' })
  }
  t.equal(
    (await db.selectFrom('core.organizationMembers').select('suspendedAt').where('id', '=', ownerMember).executeTakeFirstOrThrow())
      .suspendedAt,
    null,
    'nothing changed',
  )
  t.equal((await scim(ownerToken, 'PATCH', retitle)).statusCode, 204, "an owner's token may")
})
