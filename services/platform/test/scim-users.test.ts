import t from 'tap'
import { SCIM, createScimToken, scimOrganization } from './scim-setup.js'

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User'
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

const { app, db, service, owner, orgId, scim } = await scimOrganization(t, 'initech')

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
const call = (method: Method, path: string, payload?: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method,
    url: `${SCIM}${path}`,
    headers: { ...scim, ...(payload === undefined ? {} : { 'content-type': 'application/scim+json' }), ...headers },
    payload: payload === undefined ? undefined : JSON.stringify(payload),
  })

function userBody(userName: string, extra: Record<string, unknown> = {}) {
  return {
    schemas: [USER],
    userName,
    name: { givenName: 'Peter', familyName: 'Gibbons' },
    emails: [{ value: userName, type: 'work', primary: true }],
    active: true,
    ...extra,
  }
}

/** Setup: throws rather than asserts, so a failure fails the test that called it. */
async function createUser(userName: string, extra: Record<string, unknown> = {}): Promise<{ id: string } & Record<string, unknown>> {
  const response = await call('POST', '/Users', userBody(userName, extra))
  if (response.statusCode !== 201) throw new Error(`creating ${userName}: ${response.statusCode} ${response.body}`)
  return response.json()
}

const patch = (id: string, operations: unknown[], resource = 'Users') =>
  call('PATCH', `/${resource}/${id}`, { schemas: [PATCH_OP], Operations: operations })
const get = async (id: string) => (await call('GET', `/Users/${id}`)).json()
const auditActions = async (entityId: string) =>
  await db
    .selectFrom('core.auditLogs')
    .select(['action', 'actorType', 'actorTokenId'])
    .where('entityId', '=', entityId)
    .orderBy('createdAt')
    .execute()

t.test('a created User answers 201 with Location, ETag, meta, and no password or nulls', async (t) => {
  const response = await call(
    'POST',
    '/Users',
    userBody('milton@initech.example', {
      password: 'hunter2',
      nickName: null,
      externalId: 'okta-00u1',
      [ENTERPRISE]: { department: 'Basement', manager: 'bill-id' },
    }),
  )
  t.equal(response.statusCode, 201)
  t.match(response.headers['content-type'], /^application\/scim\+json/)
  const user = response.json()
  t.equal(response.headers.location, user.meta.location)
  t.match(user.meta.location, new RegExp(`/api/v1/scim/v2/Users/${user.id}$`))
  t.equal(response.headers.etag, user.meta.version)
  t.match(user, {
    schemas: [USER, ENTERPRISE],
    userName: 'milton@initech.example',
    externalId: 'okta-00u1',
    active: true,
    meta: { resourceType: 'User' },
  })
  t.same(user[ENTERPRISE], { department: 'Basement', manager: { value: 'bill-id' } }, 'a manager sent as a bare id is read as its value')
  t.notOk('password' in user)
  t.notOk('nickName' in user)
  t.notMatch(
    JSON.stringify(await db.selectFrom('core.organizationMembers').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow()),
    /hunter2/,
    'the password is not stored',
  )
  t.same(await auditActions(user.id), [
    {
      action: 'scim_user.created',
      actorType: 'scim_token',
      actorTokenId: (await db.selectFrom('core.scimTokens').select('id').executeTakeFirstOrThrow()).id,
    },
  ])
})

t.test('members who joined without SCIM are Users, so a provider can match them by userName', async (t) => {
  await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/members`,
    headers: owner.headers,
    payload: { email: 'Samir@Initech.example', role: 'member' },
  })
  const found = (await call('GET', `/Users?filter=${encodeURIComponent('userName eq "samir@initech.example"')}`)).json()
  t.equal(found.totalResults, 1)
  t.match(found.Resources[0], {
    userName: 'Samir@Initech.example',
    active: true,
    emails: [{ value: 'Samir@Initech.example', primary: true }],
  })
  const conflict = await call('POST', '/Users', userBody('SAMIR@initech.example'))
  t.equal(conflict.statusCode, 409)
  t.match(conflict.json(), { status: '409', scimType: 'uniqueness', schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] })
})

t.test('a User is linked to the platform account with its e-mail, or to a new pending one', async (t) => {
  const michael = await service.signIn('michael@initech.example')
  const linked = await createUser('mbolton', { emails: [{ value: 'Michael@initech.example', primary: 'True' }] })
  const row = await db
    .selectFrom('core.organizationMembers')
    .select(['userId', 'role'])
    .where('id', '=', linked.id)
    .executeTakeFirstOrThrow()
  t.same(row, { userId: michael.userId, role: 'member' })
  const organizations = await app.inject({ method: 'GET', url: '/api/v1/organizations', headers: michael.headers })
  t.ok(
    organizations.json().data.some((organization: { id: string }) => organization.id === orgId),
    'the account is a member at once',
  )

  const fresh = await createUser('lumbergh@initech.example')
  const account = await db
    .selectFrom('core.organizationMembers as m')
    .innerJoin('core.users as u', 'u.id', 'm.userId')
    .select(['u.email', 'u.idpSubject'])
    .where('m.id', '=', fresh.id)
    .executeTakeFirstOrThrow()
  t.same(account, { email: 'lumbergh@initech.example', idpSubject: null }, 'pending until the first sign-in')
  const bill = await service.signIn('lumbergh@initech.example')
  const membership = await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}`, headers: bill.headers })
  t.equal(membership.statusCode, 200, 'the first sign-in claims it')

  const twin = await createUser('mbolton-2', { emails: [{ value: 'michael@initech.example', primary: true }] })
  t.not(
    (await db.selectFrom('core.organizationMembers').select('userId').where('id', '=', twin.id).executeTakeFirstOrThrow()).userId,
    michael.userId,
    'e-mails need not be unique: a second User with it is a second account',
  )
})

t.test('userName is unique per organization case-insensitively on POST, PUT and PATCH, and a refusal changes nothing', async (t) => {
  const first = await createUser('Joanna@initech.example')
  const second = await createUser('lawrence@initech.example')
  const before = await get(second.id)
  const put = await call('PUT', `/Users/${second.id}`, userBody('JOANNA@initech.example'))
  t.match({ status: put.statusCode, body: put.json() }, { status: 409, body: { scimType: 'uniqueness', status: '409' } })
  const patched = await patch(second.id, [{ op: 'replace', path: 'userName', value: 'joanna@INITECH.example' }])
  t.match({ status: patched.statusCode, body: patched.json() }, { status: 409, body: { scimType: 'uniqueness' } })
  t.same(await get(second.id), before)
  t.equal((await get(first.id)).userName, 'Joanna@initech.example', 'stored as sent')
  const other = await scimOrganization(t, 'chotchkies')
  const elsewhere = await other.app.inject({
    method: 'POST',
    url: `${SCIM}/Users`,
    headers: other.scim,
    payload: userBody('joanna@initech.example'),
  })
  t.equal(elsewhere.statusCode, 201, 'another organization may use the same userName')
})

t.test('PUT replaces the User: what is left out is gone', async (t) => {
  const user = await createUser('tom@initech.example', { title: 'Liaison', phoneNumbers: [{ value: '555-0100', type: 'work' }] })
  const replaced = await call('PUT', `/Users/${user.id}`, {
    schemas: [USER],
    userName: 'tom@initech.example',
    name: { formatted: 'Tom Smykowski' },
    emails: [{ value: 'tom@initech.example' }],
  })
  t.equal(replaced.statusCode, 200)
  const body = replaced.json()
  t.same(body.name, { formatted: 'Tom Smykowski' })
  t.notOk('title' in body)
  t.notOk('phoneNumbers' in body)
  t.equal(body.active, true, 'active defaults to true')
  t.equal(replaced.headers.etag, body.meta.version)
  t.not(body.meta.version, user.meta && (user.meta as { version: string }).version)
})

t.test('PATCH speaks every dialect providers send', async (t) => {
  const user = await createUser('nina@initech.example')

  t.test('Entra: Replace with string booleans and path-less dotted and URN keys', async (t) => {
    const response = await patch(user.id, [
      { op: 'Replace', path: 'active', value: 'False' },
      { op: 'Add', value: { 'name.givenName': 'Nina', [`${ENTERPRISE}:department`]: 'Front desk', title: 'Receptionist' } },
    ])
    t.equal(response.statusCode, 204)
    t.match(response.headers.etag, /^W\/"/)
    t.match(await get(user.id), {
      active: false,
      title: 'Receptionist',
      name: { givenName: 'Nina', familyName: 'Gibbons' },
      [ENTERPRISE]: { department: 'Front desk' },
    })
  })

  t.test('Okta: path-less replace of active', async (t) => {
    t.equal((await patch(user.id, [{ op: 'replace', value: { active: true } }])).statusCode, 204)
    t.equal((await get(user.id)).active, true)
  })

  t.test('a filtered path creates the entry when it is absent, and updates it when present', async (t) => {
    t.equal((await patch(user.id, [{ op: 'add', path: 'emails[type eq "home"].value', value: 'nina@home.example' }])).statusCode, 204)
    t.equal(
      (await patch(user.id, [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'nina.r@initech.example' }])).statusCode,
      204,
    )
    t.same((await get(user.id)).emails, [
      { value: 'nina.r@initech.example', type: 'work', primary: true },
      { type: 'home', value: 'nina@home.example' },
    ])
    t.equal((await patch(user.id, [{ op: 'remove', path: 'emails[type eq "home"]' }])).statusCode, 204)
    t.same((await get(user.id)).emails, [{ value: 'nina.r@initech.example', type: 'work', primary: true }])
  })

  t.test('attributes in the query ask for the User back', async (t) => {
    const response = await app.inject({
      method: 'PATCH',
      url: `${SCIM}/users/${user.id}/?attributes=userName,title`,
      headers: { ...scim, 'content-type': 'application/json' },
      payload: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'Title', value: 'Lead receptionist' }] },
    })
    t.equal(response.statusCode, 200)
    t.same(response.json(), { userName: 'nina@initech.example', title: 'Lead receptionist', id: user.id, schemas: [USER, ENTERPRISE] })
  })

  t.test('the operations of one request apply together or not at all', async (t) => {
    const before = await get(user.id)
    const response = await patch(user.id, [
      { op: 'replace', path: 'title', value: 'Changed' },
      { op: 'replace', path: 'active', value: 'maybe' },
    ])
    t.equal(response.statusCode, 400)
    t.match(response.json(), { scimType: 'invalidValue', detail: /active/ })
    t.same(await get(user.id), before)
    for (const [operations, scimType] of [
      [[{ op: 'move', path: 'title', value: 'x' }], 'invalidSyntax'],
      [[{ op: 'remove' }], 'noTarget'],
      [[{ op: 'replace', value: 'not an object' }], 'invalidValue'],
      [[], 'invalidSyntax'],
    ] as const) {
      const refused = await patch(user.id, [...operations])
      t.equal(refused.statusCode, 400, JSON.stringify(operations))
      t.equal(refused.json().scimType, scimType)
    }
    t.same(await get(user.id), before)
  })
})

t.test('deactivation suspends the membership without deleting anything; reactivation restores it', async (t) => {
  const person = await service.signIn('dom@initech.example')
  const user = await createUser('dom@initech.example')
  const asDom = () => app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}`, headers: person.headers })
  t.equal((await asDom()).statusCode, 200)
  t.equal((await patch(user.id, [{ op: 'replace', path: 'active', value: false }])).statusCode, 204)
  t.equal((await asDom()).statusCode, 404, 'a suspended member is no member')
  const listed = await app.inject({ method: 'GET', url: '/api/v1/organizations', headers: person.headers })
  t.notOk(
    listed.json().data.some((organization: { id: string }) => organization.id === orgId),
    'nor is it listed among their organizations',
  )
  const members = (
    await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/members?search=dom@`, headers: owner.headers })
  ).json().data
  t.match(members, [{ id: user.id, suspended: true }], 'admins see the member as suspended')
  const row = await db
    .selectFrom('core.organizationMembers')
    .select(['suspendedAt', 'userId'])
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow()
  t.ok(row.suspendedAt, 'the membership is kept, suspended')
  t.equal(row.userId, person.userId)
  t.equal((await patch(user.id, [{ op: 'replace', path: 'active', value: true }])).statusCode, 204)
  t.equal((await asDom()).statusCode, 200)
  t.same(
    (await auditActions(user.id)).map((entry) => entry.action),
    ['scim_user.created', 'scim_user.updated', 'scim_user.updated'],
  )
})

t.test('DELETE deprovisions: the User is gone, the audit log stays, and the userName can come back', async (t) => {
  const person = await service.signIn('bob@initech.example')
  const user = await createUser('bob@initech.example')
  const deleted = await call('DELETE', `/Users/${user.id}`, undefined, { 'content-type': 'application/scim+json' })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.body, '')
  t.equal((await call('GET', `/Users/${user.id}`)).statusCode, 404)
  t.equal((await call('DELETE', `/Users/${user.id}`)).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}`, headers: person.headers })).statusCode, 404)
  t.same(
    (await auditActions(user.id)).map((entry) => entry.action),
    ['scim_user.created', 'scim_user.deleted'],
  )
  const again = await createUser('bob@initech.example')
  t.not(again.id, user.id)
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}`, headers: person.headers })).statusCode,
    200,
    'the same account is a member again',
  )
})

t.test('the last active owner can be neither suspended nor deprovisioned', async (t) => {
  const ownerId = (await call('GET', `/Users?filter=${encodeURIComponent(`userName eq "${owner.email}"`)}`)).json().Resources[0].id
  const suspended = await patch(ownerId, [{ op: 'replace', path: 'active', value: false }])
  t.match({ status: suspended.statusCode, body: suspended.json() }, { status: 400, body: { scimType: 'mutability' } })
  const deleted = await call('DELETE', `/Users/${ownerId}`)
  t.match({ status: deleted.statusCode, body: deleted.json() }, { status: 400, body: { scimType: 'mutability' } })
  t.equal((await get(ownerId)).active, true)
})

t.test('bad input is a SCIM 400 and stores nothing', async (t) => {
  const count = async () =>
    Number(
      (
        await db
          .selectFrom('core.organizationMembers')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organizationId', '=', orgId)
          .executeTakeFirstOrThrow()
      ).n,
    )
  const before = await count()
  for (const [payload, scimType] of [
    [{ schemas: [USER], name: { givenName: 'No' } }, 'invalidValue'],
    [{ schemas: [USER], userName: '   ' }, 'invalidValue'],
    [{ schemas: [USER], userName: 'x@initech.example', active: 'sometimes' }, 'invalidValue'],
    [{ schemas: [USER], userName: 'x@initech.example', emails: [42] }, 'invalidValue'],
    [{ schemas: [USER], userName: 'x@initech.example', name: 'X' }, 'invalidValue'],
  ] as const) {
    const response = await call('POST', '/Users', payload)
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.equal(response.json().scimType, scimType)
  }
  const junk = await app.inject({
    method: 'POST',
    url: `${SCIM}/Users`,
    headers: { ...scim, 'content-type': 'application/scim+json' },
    payload: '{"userName": tre',
  })
  t.match({ status: junk.statusCode, body: junk.json() }, { status: 400, body: { scimType: 'invalidSyntax', status: '400' } })
  const text = await app.inject({
    method: 'POST',
    url: `${SCIM}/Users`,
    headers: { ...scim, 'content-type': 'application/xml' },
    payload: '<userName/>',
  })
  t.equal(text.statusCode, 415)
  t.match(text.headers['content-type'], /^application\/scim\+json/)
  t.equal(await count(), before)
})

t.test('a malformed or unknown id is 404, never 500', async (t) => {
  for (const id of ['00919288221112222', 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const payload =
        method === 'PUT'
          ? userBody('ghost@initech.example')
          : method === 'PATCH'
            ? { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'x' }] }
            : undefined
      const response = await call(method, `/Users/${id}`, payload)
      t.equal(response.statusCode, 404, `${method} ${id}`)
      t.match(response.json(), { status: '404', detail: /not found/ })
    }
  }
  t.equal((await call('GET', '/Nothing')).statusCode, 404)
})

t.test('paths are tolerated in any letter case and with a trailing slash', async (t) => {
  for (const path of ['/users', '/USERS/', '/Users/', '/serviceproviderconfig', '/resourcetypes/', '/Schemas/']) {
    t.equal((await call('GET', path)).statusCode, 200, path)
  }
})

t.test('If-Match with a stale version is 412 and changes nothing', async (t) => {
  const user = await createUser('drew@initech.example')
  const version = (user.meta as { version: string }).version
  t.equal((await patch(user.id, [{ op: 'replace', path: 'title', value: 'Manager' }])).statusCode, 204)
  const stale = await call(
    'PATCH',
    `/Users/${user.id}`,
    { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'Stale' }] },
    { 'if-match': version },
  )
  t.equal(stale.statusCode, 412)
  t.equal((await get(user.id)).title, 'Manager')
  const current = (await call('GET', `/Users/${user.id}`)).headers.etag as string
  t.equal(
    (
      await call(
        'PATCH',
        `/Users/${user.id}`,
        { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'Fresh' }] },
        { 'if-match': current },
      )
    ).statusCode,
    204,
  )
})

t.test('a SCIM token sees only its organization, and authenticates nothing else', async (t) => {
  const other = await scimOrganization(t, 'penetrode')
  const theirs = (
    await other.app.inject({ method: 'POST', url: `${SCIM}/Users`, headers: other.scim, payload: userBody('spy@penetrode.example') })
  ).json()
  // Both organizations on one database: a token of one organization and ids of the other.
  const foreignToken = await createScimToken(app, orgId, owner.headers)
  const foreign = { authorization: `Bearer ${foreignToken}` }
  const seen = (await other.app.inject({ method: 'GET', url: `${SCIM}/Users`, headers: other.scim })).json()
  t.same(seen.Resources.map((user: { userName: string }) => user.userName).sort(), [other.owner.email, 'spy@penetrode.example'].sort())
  t.equal((await app.inject({ method: 'GET', url: `${SCIM}/Users/${theirs.id}`, headers: foreign })).statusCode, 404)

  const mine = await createUser('peter@initech.example')
  const otherToken = await createScimToken(other.app, other.orgId, other.owner.headers)
  const otherHeaders = { authorization: `Bearer ${otherToken}` }
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
    const payload =
      method === 'PUT'
        ? userBody('peter@initech.example', { title: 'hijacked' })
        : method === 'PATCH'
          ? { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'hijacked' }] }
          : undefined
    const response = await other.app.inject({
      method,
      url: `${SCIM}/Users/${mine.id}`,
      headers: { ...otherHeaders, 'content-type': 'application/json' },
      payload: payload === undefined ? undefined : JSON.stringify(payload),
    })
    t.equal(response.statusCode, 404, `${method} of another organization's User`)
  }
  const filtered = (
    await other.app.inject({
      method: 'GET',
      url: `${SCIM}/Users?filter=${encodeURIComponent('userName eq "peter@initech.example"')}`,
      headers: otherHeaders,
    })
  ).json()
  t.equal(filtered.totalResults, 0)

  t.equal(
    (await app.inject({ method: 'GET', url: `${SCIM}/Users`, headers: owner.headers })).statusCode,
    401,
    'an identity token is no SCIM token',
  )
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}`, headers: scim })).statusCode,
    401,
    'a SCIM token is no identity token',
  )
  const none = await app.inject({ method: 'GET', url: `${SCIM}/Users`, headers: { authorization: 'non-token' } })
  t.match(
    { status: none.statusCode, body: none.json() },
    { status: 401, body: { status: '401', schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] } },
  )
})

t.test('concurrent creates of one userName: exactly one wins, the others are 409 uniqueness', async (t) => {
  const attempts = await Promise.all(
    ['race@initech.example', 'RACE@initech.example', 'Race@Initech.example', 'race@INITECH.example'].map((userName) =>
      call('POST', '/Users', userBody(userName)),
    ),
  )
  const statuses = attempts.map((response) => response.statusCode).sort()
  t.same(statuses, [201, 409, 409, 409])
  for (const refused of attempts.filter((response) => response.statusCode === 409)) t.equal(refused.json().scimType, 'uniqueness')
  const stored = await db
    .selectFrom('core.organizationMembers')
    .select('id')
    .where('organizationId', '=', orgId)
    .where((eb) => eb(eb.fn('lower', ['userName']), '=', 'race@initech.example'))
    .execute()
  t.equal(stored.length, 1)
})
