import t from 'tap'
import { buildApp } from '@svc/platform'
import { invitationTokenFor, startTestService } from '@svc/testkit'
import { SCIM, createScimToken } from './scim-setup.js'

// Accounts are identified by `sub`; an address claims or changes something only when the token
// says email_verified: true (decision 0012, "Accounts").

const service = await startTestService(t, buildApp)
const { app, issuer } = service
const db = app.database.db
const owner = await service.signIn('owner@linking.example')
const organization = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'Linking', slug: 'linking' } })
).json() as { id: string }
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const me = async (token: string) => (await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) })).json()
const accept = async (token: string, email: string) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/invitations/accept',
    headers: bearer(token),
    payload: { token: await invitationTokenFor(app, email) },
  })
const organizationsOf = async (token: string) =>
  (await app.inject({ method: 'GET', url: '/api/v1/organizations', headers: bearer(token) })).json().data as Array<{ id: string }>

t.test('an unverified address signs in but claims no pending membership; a verified one does', async (t) => {
  const added = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${organization.id}/members`,
    headers: owner.headers,
    payload: { email: 'pending@linking.example', role: 'admin' },
  })
  t.equal(added.statusCode, 201)
  const pendingUserId = (
    await db.selectFrom('core.users').select('id').where('email', '=', 'pending@linking.example').executeTakeFirstOrThrow()
  ).id

  const impostor = issuer.idp.mintIdToken({ email: 'pending@linking.example', sub: 'impostor-subject', emailVerified: false })
  const profile = await me(impostor)
  t.not(profile.userId, pendingUserId, 'a separate account of its own')
  t.same(await organizationsOf(impostor), [], 'and no membership')
  t.equal((await accept(impostor, 'pending@linking.example')).statusCode, 403, 'nor can it accept the invitation')
  t.equal(
    (await db.selectFrom('core.users').select('idpSubject').where('id', '=', pendingUserId).executeTakeFirstOrThrow()).idpSubject,
    null,
    'the pending account is still unclaimed',
  )

  const person = issuer.idp.mintIdToken({ email: 'pending@linking.example', sub: 'real-subject' })
  t.equal((await me(person)).userId, pendingUserId, 'the verified address claims it')
  t.same(await organizationsOf(person), [], 'the membership waits for the invitation to be accepted')
  t.equal((await accept(person, 'pending@linking.example')).statusCode, 200)
  t.same(
    (await organizationsOf(person)).map((entry) => entry.id),
    [organization.id],
  )
})

t.test('an account whose address is unverified is never linked: adding a member and SCIM make pending memberships', async (t) => {
  // The attacker signs in once with the victim's address, unverified.
  const attacker = issuer.idp.mintIdToken({ email: 'dave@acme-corp.example', sub: 'dave-subject', emailVerified: false })
  const attackerId = (await me(attacker)).userId
  const added = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${organization.id}/members`,
    headers: owner.headers,
    payload: { email: 'dave@acme-corp.example', role: 'admin' },
  })
  t.equal(added.statusCode, 201)
  t.not(added.json().userId, attackerId, 'the membership waits on an account of its own')
  t.equal(added.json().pending, true)

  const token = await createScimToken(app, organization.id, owner.headers)
  const provisioned = await app.inject({
    method: 'POST',
    url: `${SCIM}/Users`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    payload: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'dave.scim@acme-corp.example', active: true },
  })
  t.equal(provisioned.statusCode, 201)
  const scimAccount = await db
    .selectFrom('core.organizationMembers')
    .select('userId')
    .where('id', '=', provisioned.json().id)
    .executeTakeFirstOrThrow()
  const scimAttacker = issuer.idp.mintIdToken({ email: 'dave.scim@acme-corp.example', sub: 'attacker-2', emailVerified: false })
  t.not(scimAccount.userId, (await me(scimAttacker)).userId)

  t.same(await organizationsOf(attacker), [], 'the attacker got nothing')
  t.same(await organizationsOf(scimAttacker), [])
  const scimRead = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${organization.id}/scim-tokens`,
    headers: bearer(attacker),
  })
  t.equal(scimRead.statusCode, 404, 'nor can it read the organization’s SCIM tokens')

  // The same subject, once its provider has verified the address, claims what waited for it.
  const verified = issuer.idp.mintIdToken({ email: 'dave@acme-corp.example', sub: 'dave-subject' })
  t.same(await organizationsOf(verified), [], 'a verified sign-in claims the membership, which waits for the invitation')
  t.equal((await accept(verified, 'dave@acme-corp.example')).statusCode, 200)
  t.same(
    (await organizationsOf(verified)).map((o) => o.id),
    [organization.id],
    'accepted, it is theirs',
  )
  const members = (
    await app.inject({ method: 'GET', url: `/api/v1/organizations/${organization.id}/members?limit=100`, headers: owner.headers })
  ).json().data as Array<{ email: string; pending: boolean; userId: string }>
  t.match(
    members.find((member) => member.email === 'dave@acme-corp.example'),
    { pending: false, userId: attackerId },
  )
})

t.test('a known subject keeps its address unless the new one is verified', async (t) => {
  const first = issuer.idp.mintIdToken({ email: 'mover@linking.example', sub: 'mover-subject' })
  const userId = (await me(first)).userId
  await me(issuer.idp.mintIdToken({ email: 'unverified@elsewhere.example', sub: 'mover-subject', emailVerified: false }))
  t.equal(
    (await db.selectFrom('core.users').select('email').where('id', '=', userId).executeTakeFirstOrThrow()).email,
    'mover@linking.example',
  )
  await me(issuer.idp.mintIdToken({ email: 'moved@linking.example', sub: 'mover-subject' }))
  t.equal(
    (await db.selectFrom('core.users').select('email').where('id', '=', userId).executeTakeFirstOrThrow()).email,
    'moved@linking.example',
  )
})

t.test('profile claims are stored at sign-in and shown by /users/me and as the SCIM name of a member who signed in', async (t) => {
  const named = issuer.idp.mintIdToken({ email: 'named@linking.example', name: 'Grace Hopper', givenName: 'Grace', familyName: 'Hopper' })
  const created = (
    await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: bearer(named), payload: { name: 'Named', slug: 'named' } })
  ).json() as { id: string }
  t.match(await me(named), { name: 'Grace Hopper', givenName: 'Grace', familyName: 'Hopper', displayName: null })

  const token = await createScimToken(app, created.id, bearer(named))
  const list = (await app.inject({ method: 'GET', url: `${SCIM}/Users`, headers: { authorization: `Bearer ${token}` } })).json()
  t.match(list.Resources[0], { userName: 'named@linking.example', name: { givenName: 'Grace', familyName: 'Hopper' } })

  const renamed = issuer.idp.mintIdToken({ email: 'named@linking.example', givenName: 'Amazing Grace' })
  t.match(await me(renamed), { givenName: 'Amazing Grace', familyName: 'Hopper' }, 'a claim the token leaves out keeps its value')
})
