import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { buildApp as buildPlatform } from '@svc/platform'
import { invitationTokenFor, startSmtpServer, startTestService, type SignedIn } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    notifier: {
      ...DEFAULT_NOTIFIER_CONFIG,
      smtpUrl: smtp.url,
      from: 'Incidents <incidents@example.com>',
      appUrl: 'https://app.example.com',
      retryDelaySeconds: 1,
    },
  },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'team', {
  admin: null,
  alertingAdmin: { alerting: 'admin' },
  responder: { alerting: 'responder', insights: 'admin' },
  manager: { alerting: 'manager' },
  global: null,
})
const [owner, admin, alertingAdmin, responder, manager, global, stranger] = [
  'owner',
  'admin',
  'alertingAdmin',
  'responder',
  'manager',
  'global',
  'stranger',
].map(person)
await db
  .updateTable('core.organizationMembers')
  .set({ role: 'admin' })
  .where('organizationId', '=', orgId)
  .where('userId', '=', admin!.userId)
  .execute()
await db.updateTable('core.users').set({ platformRole: 'GLOBAL_ADMIN' }).where('id', '=', global!.userId).execute()
app.sessions.forget(global!.userId)

const invite = (who: { headers: SignedIn['headers'] }, payload: unknown, organizationId = orgId) =>
  app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${organizationId}/users/invite`,
    headers: who.headers,
    payload: payload as object,
  })

/** Rows an invitation writes; a refused one must leave every count as it was. */
async function counts() {
  const count = async (
    table: 'core.users' | 'core.organizationMembers' | 'core.orgProductRoles' | 'core.outbox' | 'core.auditLogs' | 'core.invitations',
  ) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return {
    users: await count('core.users'),
    members: await count('core.organizationMembers'),
    productRoles: await count('core.orgProductRoles'),
    outbox: await count('core.outbox'),
    audit: await count('core.auditLogs'),
    invitations: await count('core.invitations'),
  }
}

async function delivered(messageId: string) {
  for (;;) {
    const row = await db.selectFrom('core.outbox').selectAll().where('id', '=', messageId).executeTakeFirstOrThrow()
    if (row.status !== 'pending') return row
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

t.test('an organization admin invites a new address: the platform’s invitation, a waiting membership, and an e-mail', async (t) => {
  const response = await invite(admin!, { email: 'grace@team.example', productRoles: { alerting: 'responder', insights: 'viewer' } })
  t.equal(response.statusCode, 201)
  const body = response.json()
  t.match(body, {
    email: 'grace@team.example',
    displayName: null,
    role: 'member',
    productRoles: { alerting: 'responder', insights: 'viewer' },
    pending: true,
    suspended: false,
    invited: true,
    invitation: { email: 'grace@team.example', status: 'pending', invitedBy: { userId: admin!.userId }, delivery: { status: 'pending' } },
  })
  t.equal(body.invitation.memberId, body.memberId)

  t.equal(body.userId, null, 'an invitation names no account')
  const membership = await db.selectFrom('core.organizationMembers').selectAll().where('id', '=', body.memberId).executeTakeFirstOrThrow()
  t.match(membership, { organizationId: orgId, role: 'member' })
  const user = await db.selectFrom('core.users').selectAll().where('id', '=', membership.userId).executeTakeFirstOrThrow()
  t.match(user, { email: 'grace@team.example', idpSubject: null })
  const audit = await db.selectFrom('core.auditLogs').selectAll().where('entityId', '=', body.memberId).executeTakeFirstOrThrow()
  t.match(audit, { action: 'member.invited', product: 'platform', entityType: 'member', organizationId: orgId, actorUserId: admin!.userId })
  const sentAudit = await db.selectFrom('core.auditLogs').selectAll().where('entityId', '=', body.invitation.id).executeTakeFirstOrThrow()
  t.match(sentAudit, { action: 'invitation.sent', entityType: 'invitation', actorUserId: admin!.userId })

  const message = await delivered(body.invitation.delivery.messageId)
  t.match(message, { status: 'sent', kind: 'member.invitation', recipient: 'grace@team.example', organizationId: orgId, attempts: 1 })
  const mail = smtp.received.find((received) => received.envelopeTo.includes('grace@team.example'))
  t.ok(mail, 'the SMTP server received the invitation')
  t.equal(mail?.subject, 'You are invited to team')
  t.match(mail?.text, /admin@team\.example invited you to join team as a member\./)
  t.match(mail?.text, /Your access: Alerting: responder, Insights: viewer\./)
  t.match(
    mail?.text,
    /open https:\/\/app\.example\.com\/invitations\/accept\?token=inv_\S+ and sign in with this address, grace@team\.example\./,
  )
  t.match(mail?.text, body.invitation.acceptUrl, 'the link the answer shows')

  // The platform shows the same membership and invitation, waiting for the invited person.
  const platform = await buildPlatform(service.config, service.resources)
  t.teardown(() => platform.close())
  const onPlatform = await platform.inject({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/members?search=grace`,
    headers: owner!.headers,
  })
  t.match(onPlatform.json().data, [
    { id: body.memberId, pending: true, invited: true, productRoles: { alerting: 'responder', insights: 'viewer' } },
  ])
  const onPlatformInvitation = await platform.inject({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/invitations/${body.invitation.id}`,
    headers: owner!.headers,
  })
  t.match(onPlatformInvitation.json(), { memberId: body.memberId, status: 'pending' })

  const grace = await service.signIn('grace@team.example')
  t.equal(grace.userId, membership.userId, 'the sign-in claims the pending account')
  const users = () => app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/users`, headers: grace.headers })
  t.equal((await users()).statusCode, 404, 'no member before accepting')
  const accepted = await platform.inject({
    method: 'POST',
    url: '/api/v1/invitations/accept',
    headers: grace.headers,
    payload: { token: await invitationTokenFor(app, 'grace@team.example') },
  })
  t.equal(accepted.statusCode, 200)
  const listed = await users()
  t.equal(listed.statusCode, 200, 'a member once accepted')
  t.match(
    listed.json().data.find((row: { email: string }) => row.email === 'grace@team.example'),
    { pending: false, invited: false },
  )
})

t.test('an account that exists is invited as it is, and an address already a member is a 409 in any letter case', async (t) => {
  const ada = await service.signIn('ada@elsewhere.example')
  const response = await invite(owner!, { email: 'ada@elsewhere.example', role: 'admin' })
  t.equal(response.statusCode, 201)
  // An invitation reveals nothing about the account behind the address: not its id, its name,
  // nor that it has signed in before.
  t.match(response.json(), { userId: null, displayName: null, role: 'admin', pending: true, invited: true, productRoles: {} })
  const mail = await delivered(response.json().invitation.delivery.messageId)
  t.match(mail.bodyText, /owner@team\.example invited you to join team as an admin\./)
  t.match(mail.bodyText, /An admin of the organization will grant you access to its products\./)

  // Until Ada accepts, her account is no member: not on the organization, not on a team.
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/users`, headers: ada.headers })).statusCode, 404)
  const team = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/teams`,
    headers: owner!.headers,
    payload: { name: 'With Ada', members: [{ userId: ada.userId, role: 'responder' }] },
  })
  t.equal(team.statusCode, 400, 'an invited account cannot be put on a team before accepting')
  t.match(team.json().message, /members\/0\/userId/)

  const before = await counts()
  const again = await invite(owner!, { email: 'Responder@Team.Example' })
  t.equal(again.statusCode, 409)
  t.match(again.json(), { statusCode: 409, code: 'CONFLICT', message: 'Responder@Team.Example is already a member' })
  t.same(await counts(), before, 'nothing written, no e-mail queued')
})

t.test(
  'an account that signed in with the address unverified is not the one invited: the membership waits for a verified sign-in',
  async (t) => {
    const impostor = service.issuer.idp.mintIdToken({ email: 'eve@team.example', sub: 'impostor', emailVerified: false })
    const impostorId = (
      await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${impostor}` } })
    ).json().userId as string
    const response = await invite(owner!, { email: 'eve@team.example', role: 'admin' })
    t.equal(response.statusCode, 201)
    t.match(response.json(), { pending: true })
    t.not(response.json().userId, impostorId, 'the invitation did not go to the account that only typed the address')
    const theirs = await db.selectFrom('core.organizationMembers').select('id').where('userId', '=', impostorId).execute()
    t.same(theirs, [], 'it holds no membership')
  },
)

t.test('a product admin invites members with roles in the products they administer, and nothing more', async (t) => {
  const allowed = await invite(alertingAdmin!, { email: 'linus@team.example', productRoles: { alerting: 'admin' } })
  t.equal(allowed.statusCode, 201)
  t.match(allowed.json(), { role: 'member', productRoles: { alerting: 'admin' }, pending: true })

  const viaInsights = await invite(responder!, { email: 'ken@team.example', productRoles: { insights: 'responder' } })
  t.equal(viaInsights.statusCode, 201, 'an insights admin who is an alerting responder')

  const before = await counts()
  const refusals: Array<[SignedIn, unknown, string]> = [
    [alertingAdmin!, { email: 'x1@team.example', productRoles: { insights: 'viewer' } }, 'only an admin of insights grants insights roles'],
    [
      alertingAdmin!,
      { email: 'x2@team.example', role: 'admin' },
      'only admins and owners invite with the organization role admin or owner',
    ],
    [responder!, { email: 'x3@team.example', productRoles: { alerting: 'viewer' } }, 'only an admin of alerting grants alerting roles'],
    [admin!, { email: 'x4@team.example', role: 'owner' }, 'only an owner can grant the owner role'],
    [manager!, { email: 'x5@team.example' }, 'this needs the organization role admin or owner, or the role admin in a product'],
  ]
  for (const [who, payload, message] of refusals) {
    const response = await invite(who, payload)
    t.equal(response.statusCode, 403, message)
    t.same(response.json(), { statusCode: 403, error: 'Forbidden', code: 'FORBIDDEN', message })
  }
  t.same(await counts(), before, 'refusals write nothing')
})

t.test('a platform role administers every product, but grants no organization role', async (t) => {
  const response = await invite(global!, {
    email: 'support-guest@team.example',
    productRoles: { statuspages: 'manager', synthetics: 'viewer' },
  })
  t.equal(response.statusCode, 201)
  t.match(response.json(), { productRoles: { statuspages: 'manager', synthetics: 'viewer' } })
  t.equal((await invite(global!, { email: 'support-admin@team.example', role: 'admin' })).statusCode, 403)
})

t.test('another organization is not found, and bad input is a 400; neither changes anything', async (t) => {
  const before = await counts()
  t.equal((await invite(stranger!, { email: 'y@team.example' })).statusCode, 404, 'not a member')
  t.equal((await invite(owner!, { email: 'y@team.example' }, otherOrgId)).statusCode, 404, "another organization's id")
  t.equal((await invite(owner!, { email: 'y@team.example' }, 'team')).statusCode, 404, 'a malformed id')
  t.equal(
    (await app.inject({ method: 'POST', url: `/api/v1/organizations/${orgId}/users/invite`, payload: { email: 'y@team.example' } }))
      .statusCode,
    401,
  )
  const bad: Array<[string, unknown]> = [
    ['no e-mail', {}],
    ['not an e-mail', { email: 'not-an-address' }],
    ['an unknown role', { email: 'y@team.example', role: 'superuser' }],
    ['an unknown product', { email: 'y@team.example', productRoles: { billing: 'admin' } }],
    ['an unknown product role', { email: 'y@team.example', productRoles: { alerting: 'boss' } }],
    ['an unknown field', { email: 'y@team.example', sendEmail: false }],
    ['an address too long', { email: `${'a'.repeat(310)}@team.example` }],
  ]
  for (const [what, payload] of bad) {
    const response = await invite(owner!, payload)
    t.equal(response.statusCode, 400, what)
    t.equal(response.json().code, 'VALIDATION_FAILED', what)
  }
  t.same(await counts(), before)
})

t.test('without SMTP_URL the invitation is held in the outbox, readable, never dropped', async (t) => {
  const plain = await startTestService(t, buildApp, { issuer: service.issuer })
  const plainDb = plain.app.database.db
  const { orgId: plainOrg, person: plainPerson } = await alertingOrganization(plain, 'quiet', {})
  const response = await plain.app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${plainOrg}/users/invite`,
    headers: plainPerson('owner').headers,
    payload: { email: 'held@quiet.example' },
  })
  t.equal(response.statusCode, 201)
  t.match(response.json(), { pending: true, invitation: { status: 'pending', acceptUrl: null, delivery: { status: 'held' } } })
  const message = await plainDb
    .selectFrom('core.outbox')
    .selectAll()
    .where('id', '=', response.json().invitation.delivery.messageId)
    .executeTakeFirstOrThrow()
  t.match(message, { status: 'held', recipient: 'held@quiet.example', subject: 'You are invited to quiet', attempts: 0 })
  t.match(
    message.bodyText,
    /To accept, sign in with this address, held@quiet\.example, and send this invitation token\nto POST \/api\/v1\/invitations\/accept: inv_/,
    'no link without APP_URL: the token and the call',
  )
  t.match(message.lastError, /SMTP_URL/)
})
