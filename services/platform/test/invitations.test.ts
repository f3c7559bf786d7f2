import { createHash } from 'node:crypto'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, invitationTokenFor, startTestService, type SignedIn } from '@svc/testkit'

const service = await startTestService(t, buildApp, {
  config: { notifier: { ...DEFAULT_NOTIFIER_CONFIG, appUrl: 'https://app.example.com' } },
})
const { app } = service
const db = app.database.db

const owner = await service.signIn('owner@invite.example')
const admin = await service.signIn('admin@invite.example')
const outsider = await service.signIn('outsider@invite.example')
const support = await service.signIn('support@invite.example', ['PlatformAdmins'])
const createOrganization = async (who: SignedIn, slug: string) =>
  (await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: who.headers, payload: { name: `Org ${slug}`, slug } })).json<{
    id: string
  }>().id
const orgId = await createOrganization(owner, 'invite')
const otherOrgId = await createOrganization(outsider, 'invite-other')
const base = `/api/v1/organizations/${orgId}`

async function call(who: SignedIn, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) {
  return app.inject({
    method,
    url: path.startsWith('/api/') ? path : `${base}${path}`,
    headers: who.headers,
    ...(payload ? { payload } : {}),
  })
}
const accept = (who: { headers: Record<string, string> }, token: string) =>
  app.inject({ method: 'POST', url: '/api/v1/invitations/accept', headers: who.headers, payload: { token } })

async function auditActions(entityId: string) {
  const rows = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', entityId).orderBy('createdAt').execute()
  return rows.map((row) => row.action)
}
async function expire(invitationId: string) {
  await db
    .updateTable('core.invitations')
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where('id', '=', invitationId)
    .execute()
}

// The organization's admin, through an accepted invitation. (No assertion out here: tap ends a
// file's top level at its first idle moment after one, and the tests below would come too late.)
const adminInvite = await call(owner, 'POST', '/invitations', { email: admin.email, role: 'admin' })
if (adminInvite.statusCode !== 201) throw new Error(`the admin's invitation failed: ${adminInvite.body}`)
await acceptInvitationOf(app, admin)

t.test('an invitation is a resource: sent, listed, read, with its link and e-mail', async (t) => {
  const sent = await call(admin, 'POST', '/invitations', {
    email: 'Grace@Invite.example',
    role: 'member',
    productRoles: { alerting: 'responder' },
  })
  t.equal(sent.statusCode, 201)
  const body = sent.json()
  t.match(body, {
    organizationId: orgId,
    email: 'Grace@Invite.example',
    role: 'member',
    productRoles: { alerting: 'responder' },
    status: 'pending',
    invitedBy: { userId: admin.userId, email: admin.email },
    sentCount: 1,
    acceptedAt: null,
    revokedAt: null,
    acceptUrl: /^https:\/\/app\.example\.com\/invitations\/accept\?token=inv_[A-Za-z0-9_-]{43}$/,
    delivery: { status: 'held' },
  })
  const days = (Date.parse(body.expiresAt) - Date.now()) / 86_400_000
  t.ok(days > 6.99 && days <= 7, `expires in the default 7 days (${days.toFixed(3)})`)

  const token = new URL(body.acceptUrl).searchParams.get('token')!
  const stored = await db.selectFrom('core.invitations').select('tokenHash').where('id', '=', body.id).executeTakeFirstOrThrow()
  t.equal(stored.tokenHash, createHash('sha256').update(token).digest('hex'), 'only the hash of the token is stored')
  const mail = await db
    .selectFrom('core.outbox')
    .select(['recipient', 'subject', 'bodyText'])
    .where('id', '=', body.delivery.messageId)
    .executeTakeFirstOrThrow()
  t.equal(mail.recipient, 'Grace@Invite.example')
  t.equal(mail.subject, 'You are invited to Org invite')
  t.match(mail.bodyText, body.acceptUrl)
  t.match(mail.bodyText, /Alerting: responder/)
  t.match(mail.bodyText, /expires on .* and works once/)

  const members = (await call(owner, 'GET', '/members?search=grace')).json().data
  t.match(members, [{ id: body.memberId, invited: true, pending: true }], 'the waiting membership is listed as invited')

  const read = await call(owner, 'GET', `/invitations/${body.id}`)
  t.equal(read.statusCode, 200)
  t.notOk('acceptUrl' in read.json(), 'the link is shown only when sent')
  const { acceptUrl: _link, delivery: _mail, ...invitation } = body
  t.same(read.json(), invitation, 'the same invitation')

  const listed = await call(owner, 'GET', '/invitations?status=pending')
  t.same(
    listed.json().data.map((row: { email: string }) => row.email),
    ['Grace@Invite.example'],
  )
  t.equal((await call(owner, 'GET', '/invitations?status=accepted')).json().data[0].email, admin.email)
  t.equal((await call(owner, 'GET', '/invitations')).json().meta.total, 2)
  t.same(await auditActions(body.id), ['invitation.sent'])
  t.same(await auditActions(body.memberId), ['member.added'])
})

t.test('POST …/members sends the same invitation, answered as the member', async (t) => {
  const added = await call(owner, 'POST', '/members', { email: 'hopper@invite.example', role: 'member' })
  t.equal(added.statusCode, 201)
  t.match(added.json(), { email: 'hopper@invite.example', invited: true, invitation: { status: 'pending', acceptUrl: /token=inv_/ } })
  t.equal(added.json().invitation.memberId, added.json().id)
  t.equal((await call(owner, 'POST', '/invitations', { email: 'HOPPER@invite.example', role: 'admin' })).statusCode, 409, 'not twice')
  t.match((await call(owner, 'POST', '/members', { email: 'hopper@invite.example', role: 'admin' })).json().message, /already invited/)
})

t.test('accepting needs a verified sign-in with the invited address, and works once', async (t) => {
  const sent = (await call(owner, 'POST', '/invitations', { email: 'linus@invite.example', role: 'member' })).json()
  const token = new URL(sent.acceptUrl).searchParams.get('token')!
  const linus = await service.signIn('linus@invite.example')
  t.equal((await call(linus, 'GET', base)).statusCode, 404, 'an invitation grants nothing until accepted')
  t.same((await call(linus, 'GET', '/api/v1/organizations')).json().data, [], 'nor is the organization listed')

  const wrongPerson = await accept(outsider, token)
  t.equal(wrongPerson.statusCode, 403)
  t.match(wrongPerson.json().message, /sent to linus@invite\.example: sign in with that address/)
  const unverified = service.issuer.idp.mintIdToken({ email: 'linus@invite.example', sub: 'linus-unverified', emailVerified: false })
  const notVerified = await accept({ headers: { authorization: `Bearer ${unverified}` } }, token)
  t.equal(notVerified.statusCode, 403)
  t.match(notVerified.json().message, /verified/)
  const impersonating = await accept({ headers: { ...support.headers, 'x-impersonate-user-id': linus.userId } }, token)
  t.equal(impersonating.statusCode, 403, 'an admin acting as the person cannot accept for them')
  t.equal((await accept(linus, 'inv_unknown')).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/invitations/accept', payload: { token } })).statusCode, 401)
  t.equal((await accept(linus, '')).statusCode, 400)
  t.equal((await call(owner, 'GET', `/invitations/${sent.id}`)).json().status, 'pending', 'refusals changed nothing')

  const accepted = await accept(linus, token)
  t.equal(accepted.statusCode, 200)
  t.same(accepted.json(), { organization: { id: orgId, name: 'Org invite', slug: 'invite' }, memberId: sent.memberId, role: 'member' })
  t.equal((await call(linus, 'GET', base)).statusCode, 200, 'a member now')
  t.match((await call(owner, 'GET', `/invitations/${sent.id}`)).json(), { status: 'accepted', acceptedAt: /Z$/ })

  const again = await accept(linus, token)
  t.equal(again.statusCode, 410)
  t.match(again.json(), { code: 'GONE', message: /already accepted: it works once/ })
  t.same(await auditActions(sent.id), ['invitation.sent', 'invitation.accepted'])
  const joined = await db
    .selectFrom('core.analyticsEvents')
    .select('properties')
    .where('organizationId', '=', orgId)
    .where('event', '=', 'Invitation Accepted')
    .execute()
  t.match(
    joined.map((row) => row.properties),
    [{}, { invitationId: sent.id, memberId: sent.memberId, role: 'member' }],
  )
})

t.test('an expired invitation answers 410 until it is resent; a resend replaces the link', async (t) => {
  const sent = (await call(owner, 'POST', '/invitations', { email: 'ada@invite.example', role: 'member' })).json()
  const firstToken = new URL(sent.acceptUrl).searchParams.get('token')!
  const ada = await service.signIn('ada@invite.example')
  await expire(sent.id)
  t.equal((await call(owner, 'GET', `/invitations/${sent.id}`)).json().status, 'expired')
  t.equal((await call(owner, 'GET', '/invitations?status=expired')).json().data[0].id, sent.id)
  const expired = await accept(ada, firstToken)
  t.equal(expired.statusCode, 410)
  t.match(expired.json().message, /expired at .*: ask an admin of Org invite to resend it/)

  const resent = await call(admin, 'POST', `/invitations/${sent.id}/resend`)
  t.equal(resent.statusCode, 200)
  t.match(resent.json(), { status: 'pending', sentCount: 2, acceptUrl: /token=inv_/ })
  t.ok(Date.parse(resent.json().expiresAt) > Date.now() + 6.99 * 86_400_000, 'a new expiry')
  const secondToken = new URL(resent.json().acceptUrl).searchParams.get('token')!
  t.not(secondToken, firstToken)
  t.equal((await accept(ada, firstToken)).statusCode, 404, 'the old link no longer works')
  t.equal(await invitationTokenFor(app, ada.email), secondToken, 'the new e-mail carries the new link')
  // An owner may change the waiting member's role; accepting answers the role they join with.
  t.equal((await call(owner, 'PATCH', `/members/${sent.memberId}`, { role: 'admin' })).statusCode, 200)
  const accepted = await accept(ada, secondToken)
  t.equal(accepted.statusCode, 200)
  t.equal(accepted.json().role, 'admin')
  t.same(await auditActions(sent.id), ['invitation.sent', 'invitation.resent', 'invitation.accepted'])
  t.equal((await call(ada, 'GET', '/members?search=ada')).json().data[0].role, 'admin')
  t.equal((await call(owner, 'POST', `/invitations/${sent.id}/resend`)).statusCode, 409, 'an accepted invitation is not resent')
})

t.test('resending is rate limited per invitation', async (t) => {
  const sent = (await call(owner, 'POST', '/invitations', { email: 'margaret@invite.example', role: 'member' })).json()
  for (let resend = 1; resend <= 3; resend++) t.equal((await call(owner, 'POST', `/invitations/${sent.id}/resend`)).statusCode, 200)
  const limited = await call(owner, 'POST', `/invitations/${sent.id}/resend`)
  t.equal(limited.statusCode, 429)
  t.ok(Number(limited.headers['retry-after']) > 0, 'with Retry-After')
  t.equal((await call(owner, 'GET', `/invitations/${sent.id}`)).json().sentCount, 4, 'the refused resend sent nothing')
  const other = (await call(owner, 'POST', '/invitations', { email: 'katherine@invite.example', role: 'member' })).json()
  t.equal((await call(owner, 'POST', `/invitations/${other.id}/resend`)).statusCode, 200, 'another invitation has its own limit')
})

t.test('requests refused by the access rule spend nothing of an invitation’s resends', async (t) => {
  const sent = (await call(owner, 'POST', '/invitations', { email: 'hedy@invite.example', role: 'member' })).json()
  const path = `${base}/invitations/${sent.id}/resend`
  for (let attempt = 1; attempt <= 4; attempt++) {
    t.equal((await app.inject({ method: 'POST', url: path })).statusCode, 401, 'no credentials')
    t.equal((await call(outsider, 'POST', `/invitations/${sent.id}/resend`)).statusCode, 404, 'not a member')
  }
  t.equal((await call(owner, 'POST', `/invitations/${sent.id}/resend`)).statusCode, 200, 'the owner still resends it')
})

t.test('revoking answers 410 to the link and removes the waiting membership', async (t) => {
  const sent = (await call(owner, 'POST', '/invitations', { email: 'barbara@invite.example', role: 'admin' })).json()
  const token = new URL(sent.acceptUrl).searchParams.get('token')!
  t.equal((await call(admin, 'DELETE', `/invitations/${sent.id}`)).statusCode, 204)
  t.equal((await call(admin, 'DELETE', `/invitations/${sent.id}`)).statusCode, 204, 'revoking twice changes nothing more')
  t.match((await call(owner, 'GET', `/invitations/${sent.id}`)).json(), { status: 'revoked', memberId: null, revokedAt: /Z$/ })
  t.same((await call(owner, 'GET', '/members?search=barbara')).json().data, [], 'the membership is gone')
  const barbara = await service.signIn('barbara@invite.example')
  const gone = await accept(barbara, token)
  t.equal(gone.statusCode, 410)
  t.match(gone.json().message, /revoked: ask an admin of Org invite for a new one/)
  t.equal((await call(owner, 'POST', `/invitations/${sent.id}/resend`)).statusCode, 409, 'a revoked invitation is not resent')
  t.same(await auditActions(sent.id), ['invitation.sent', 'invitation.revoked'])

  // Removing the waiting member withdraws the invitation too.
  const removed = (await call(owner, 'POST', '/invitations', { email: 'frances@invite.example', role: 'member' })).json()
  t.equal((await call(owner, 'DELETE', `/members/${removed.memberId}`)).statusCode, 204)
  t.equal((await call(owner, 'GET', `/invitations/${removed.id}`)).json().status, 'revoked')
  const frances = await service.signIn('frances@invite.example')
  t.equal((await accept(frances, new URL(removed.acceptUrl).searchParams.get('token')!)).statusCode, 410)

  const accepted = (await call(owner, 'GET', '/invitations?status=accepted')).json().data[0]
  t.equal((await call(owner, 'DELETE', `/invitations/${accepted.id}`)).statusCode, 409, 'an accepted one: remove the member instead')
})

t.test('only admins and owners manage invitations, and only their organization’s', async (t) => {
  const sent = (await call(owner, 'POST', '/invitations', { email: 'edsger@invite.example', role: 'member' })).json()
  const linus = await service.signIn('linus@invite.example')
  for (const [method, path] of [
    ['GET', '/invitations'],
    ['POST', '/invitations'],
    ['GET', `/invitations/${sent.id}`],
    ['POST', `/invitations/${sent.id}/resend`],
    ['DELETE', `/invitations/${sent.id}`],
  ] as const) {
    const payload = method === 'POST' && path === '/invitations' ? { email: 'x@invite.example', role: 'member' } : undefined
    t.equal((await call(linus, method, path, payload)).statusCode, 403, `a plain member: ${method} ${path}`)
    t.equal((await call(outsider, method, path, payload)).statusCode, 404, `an outsider: ${method} ${path}`)
  }
  const elsewhere = `/api/v1/organizations/${otherOrgId}/invitations/${sent.id}`
  t.equal((await call(outsider, 'GET', elsewhere)).statusCode, 404, 'another organization’s invitation is not found through one’s own')
  t.equal((await call(outsider, 'DELETE', elsewhere)).statusCode, 404)
  t.equal((await call(owner, 'GET', '/invitations/not-a-uuid')).statusCode, 404)
  t.equal(
    (await call(admin, 'POST', '/invitations', { email: 'boss@invite.example', role: 'owner' })).statusCode,
    403,
    'an admin cannot invite an owner',
  )
  t.equal((await call(owner, 'POST', '/invitations', { email: 'not-an-email', role: 'member' })).statusCode, 400)
  t.equal((await call(owner, 'GET', '/invitations?status=lost')).statusCode, 400)
  t.equal((await call(owner, 'GET', `/invitations/${sent.id}`)).json().status, 'pending', 'nothing changed')
  t.notOk(
    await db
      .selectFrom('core.invitations')
      .select('id')
      .where('email', 'in', ['x@invite.example', 'boss@invite.example'])
      .executeTakeFirst(),
  )
})

t.test('an invited owner owns nothing until they accept', async (t) => {
  const sent = (await call(owner, 'POST', '/invitations', { email: 'grace.owner@invite.example', role: 'owner' })).json()
  const ownerMember = (await call(owner, 'GET', '/members?role=owner')).json().data.find((m: { invited: boolean }) => !m.invited)
  const leaving = await call(owner, 'DELETE', `/members/${ownerMember.id}`)
  t.equal(leaving.statusCode, 409, 'the last owner who joined cannot leave while the other has not accepted')
  t.equal((await call(owner, 'DELETE', `/invitations/${sent.id}`)).statusCode, 204)
})
