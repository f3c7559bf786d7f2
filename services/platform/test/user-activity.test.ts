import t from 'tap'
import { maintainUserActivities, USER_ACTIVITIES } from '@svc/auth'
import { monthlyPartitions } from '@svc/db'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, startTestIssuer, startTestService } from '@svc/testkit'

const issuer = await startTestIssuer(t, { clientSecret: 'activity-secret' })
const service = await startTestService(t, buildApp, {
  issuer,
  config: {
    auth: {
      issuer: issuer.issuer,
      jwksUrl: issuer.jwksUrl,
      clientIds: [issuer.clientId],
      clientSecret: 'activity-secret',
      tokenUrl: issuer.tokenUrl,
      groupsClaim: 'cognito:groups',
    },
  },
})
const { app } = service
const db = app.database.db

const owner = await service.signIn('owner@activity.example')
const member = await service.signIn('member@activity.example')
const plain = await service.signIn('plain@activity.example')
const support = await service.signIn('support@activity.example', ['PlatformAdmins'])
const { id: orgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'Active', slug: 'active' } })
).json<{ id: string }>()
const added = await app.inject({
  method: 'POST',
  url: `/api/v1/organizations/${orgId}/members`,
  headers: owner.headers,
  payload: { email: member.email, role: 'member' },
})
const memberId = added.json<{ id: string }>().id
await app.inject({
  method: 'POST',
  url: `/api/v1/organizations/${orgId}/members`,
  headers: owner.headers,
  payload: { email: plain.email, role: 'member' },
})
await acceptInvitationOf(app, member)
await acceptInvitationOf(app, plain)

type Activity = {
  kind: string
  product: string
  requests: number
  ip: string | null
  userAgent: string | null
  actedBy: string | null
  organizationId: string | null
  firstAt: string
  lastAt: string
}
const activityOf = async (headers: Record<string, string>, url = '/api/v1/users/me/activity') => {
  await app.userActivity.flush()
  const response = await app.inject({ method: 'GET', url, headers })
  t.equal(response.statusCode, 200, url)
  return response.json<{ data: Activity[]; meta: { total: number } }>()
}

t.test('API use is one row per product and day, however many requests, written off the request path', async (t) => {
  // The recorder's timer (a write a second) is stopped, which writes what is pending, so that what
  // the requests below leave unwritten does not depend on how fast the machine runs them.
  await app.userActivity.stop()
  t.teardown(() => app.userActivity.start())
  const written = () => db.selectFrom('core.userActivities').select(['kind', 'requests']).where('userId', '=', member.userId).execute()
  const before = await written()
  for (let index = 0; index < 5; index++)
    await app.inject({ method: 'GET', url: '/auth/me', headers: { ...member.headers, 'user-agent': `activity-test/${index}` } })
  t.same(await written(), before, 'nothing is written while the requests run')
  app.userActivity.start()
  const { data } = await activityOf(member.headers)
  const apiUse = data.filter((row) => row.kind === 'api_use')
  t.equal(apiUse.length, 1)
  t.match(apiUse[0], { product: 'platform', ip: '127.0.0.1', userAgent: 'activity-test/4', actedBy: null })
  t.ok(apiUse[0]!.requests >= 6, `every request counted (${apiUse[0]!.requests})`)
  t.ok(apiUse[0]!.lastAt >= apiUse[0]!.firstAt)
})

t.test('a cookie sign-in and a session refresh are rows of their own', async (t) => {
  const email = 'browser@activity.example'
  const idToken = issuer.idp.mintIdToken({ email })
  t.equal((await app.inject({ method: 'POST', url: '/auth/set-cookie', payload: { idToken } })).statusCode, 200)
  const refreshToken = issuer.idp.mintRefreshToken({ email })
  t.equal((await app.inject({ method: 'POST', url: '/auth/refresh', cookies: { svc_refresh_token: refreshToken } })).statusCode, 200)
  const { data } = await activityOf({ authorization: `Bearer ${idToken}` })
  // The read's own API use is recorded after it answers.
  t.same(data.map((row) => row.kind).sort(), ['session_refresh', 'sign_in'])
})

t.test('impersonation is recorded on the impersonated user, naming the admin', async (t) => {
  const asMember = { ...support.headers, 'x-impersonate-user-id': member.userId }
  await app.inject({ method: 'GET', url: '/auth/me', headers: asMember })
  await app.inject({ method: 'GET', url: '/auth/me', headers: asMember })
  const { data } = await activityOf(member.headers)
  const impersonation = data.find((row) => row.kind === 'impersonation')
  t.match(impersonation, { actedBy: support.userId, requests: 2, product: 'platform' })
})

t.test('admins see their members’ last activity and history; members do not', async (t) => {
  await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/members`, headers: member.headers })
  await app.userActivity.flush()
  const asOwner = await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/members`, headers: owner.headers })
  const rows = asOwner.json<{ data: Array<{ userId: string; lastActiveAt?: string | null }> }>().data
  const seen = rows.find((row) => row.userId === member.userId)
  t.ok(seen?.lastActiveAt && Date.now() - Date.parse(seen.lastActiveAt) < 60_000, 'the member was active a moment ago')
  const asMember = await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/members`, headers: plain.headers })
  t.notOk('lastActiveAt' in asMember.json<{ data: object[] }>().data[0]!, 'a plain member does not see it')

  const history = await activityOf(owner.headers, `/api/v1/organizations/${orgId}/members/${memberId}/activity`)
  t.ok(history.data.some((row) => row.kind === 'api_use'))
  t.ok(
    history.data.every((row) => row.organizationId === orgId),
    'only what the member did in this organization: no sign-ins, no use elsewhere',
  )
  const refused = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/members/${memberId}/activity`,
    headers: plain.headers,
  })
  t.equal(refused.statusCode, 403)
  const stranger = await service.signIn('stranger@elsewhere.example')
  const elsewhere = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/members/${memberId}/activity`,
    headers: stranger.headers,
  })
  t.equal(elsewhere.statusCode, 404, 'another organization’s member does not exist for a stranger')
  const unknown = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/members/00000000-0000-4000-8000-000000000000/activity`,
    headers: owner.headers,
  })
  t.equal(unknown.statusCode, 404)
})

t.test('an invitation reveals nothing about the account behind the address, and no activity elsewhere', async (t) => {
  // Anyone can create an organization and invite any address.
  const prober = await service.signIn('prober@elsewhere.example')
  const { id: probeOrg } = (
    await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: prober.headers, payload: { name: 'Probe', slug: 'probe' } })
  ).json<{ id: string }>()
  await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/members`, headers: member.headers })
  await app.userActivity.flush()
  const invited = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${probeOrg}/members`,
    headers: prober.headers,
    payload: { email: member.email, role: 'member' },
  })
  t.equal(invited.statusCode, 201)
  const invitedId = invited.json<{ id: string }>().id

  const activity = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${probeOrg}/members/${invitedId}/activity`,
    headers: prober.headers,
  })
  t.equal(activity.statusCode, 404, 'an invited member has no activity to read')

  const listed = (await app.inject({ method: 'GET', url: `/api/v1/organizations/${probeOrg}/members`, headers: prober.headers })).json<{
    data: Array<{ id: string; userId: string | null; pending: boolean; lastActiveAt?: string | null }>
  }>()
  t.match(
    listed.data.find((row) => row.id === invitedId),
    { userId: null, pending: true, lastActiveAt: null },
  )

  // Once joined, the member's use of another organization stays out of this one's view.
  await acceptInvitationOf(app, member)
  await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/members`, headers: member.headers })
  await app.userActivity.flush()
  const joined = await activityOf(prober.headers, `/api/v1/organizations/${probeOrg}/members/${invitedId}/activity`)
  t.ok(joined.data.every((row) => row.organizationId === probeOrg))
  const after = (await app.inject({ method: 'GET', url: `/api/v1/organizations/${probeOrg}/members`, headers: prober.headers })).json<{
    data: Array<{ id: string; userId: string | null; lastActiveAt?: string | null }>
  }>()
  t.match(
    after.data.find((row) => row.id === invitedId),
    { userId: member.userId, lastActiveAt: null },
  )
})

t.test('platform admins read anyone’s activity; nobody else does', async (t) => {
  const url = `/api/v1/admin/users/${member.userId}/activity`
  t.ok((await activityOf(support.headers, url)).meta.total >= 2)
  t.equal((await app.inject({ method: 'GET', url, headers: owner.headers })).statusCode, 403)
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: '/api/v1/admin/users/00000000-0000-4000-8000-000000000000/activity',
        headers: support.headers,
      })
    ).statusCode,
    404,
  )
})

t.test('retention drops whole months of activity', async (t) => {
  const inOneYear = new Date(Date.now() + 365 * 86_400_000)
  const outcome = await maintainUserActivities(db, 30, inOneYear)
  t.ok(outcome.dropped.length > 0)
  t.same(await db.selectFrom('core.userActivities').select('kind').execute(), [])
  const months = await monthlyPartitions(USER_ACTIVITIES, db)
  t.ok(months[0]!.month.getTime() >= Date.UTC(inOneYear.getUTCFullYear(), inOneYear.getUTCMonth() - 2, 1))
  await maintainUserActivities(db, 90)
  await app.inject({ method: 'GET', url: '/auth/me', headers: owner.headers })
  t.equal((await activityOf(owner.headers)).meta.total, 1, 'recorded again into this month')
})
