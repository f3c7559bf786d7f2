import t from 'tap'
import { findProductRole } from '@svc/auth'
import { SCIM, scimOrganization } from './scim-setup.js'

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group'
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

const { app, db, service, owner, orgId, scim } = await scimOrganization(t, 'hooli')

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
const call = (method: Method, path: string, payload?: unknown) =>
  app.inject({
    method,
    url: `${SCIM}${path}`,
    headers: { ...scim, ...(payload === undefined ? {} : { 'content-type': 'application/scim+json' }) },
    payload: payload === undefined ? undefined : JSON.stringify(payload),
  })
const patch = (id: string, operations: unknown[]) => call('PATCH', `/Groups/${id}`, { schemas: [PATCH_OP], Operations: operations })
const memberIds = async (groupId: string) =>
  ((await call('GET', `/Groups/${groupId}`)).json().members ?? []).map((member: { value: string }) => member.value).sort()

// Setup helpers throw rather than assert: a failure fails the test that called them.
async function created(response: Awaited<ReturnType<typeof call>>): Promise<string> {
  if (response.statusCode !== 201) throw new Error(`expected 201, got ${response.statusCode}: ${response.body}`)
  return response.json().id
}
const createUser = async (userName: string) =>
  created(
    await call('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
      emails: [{ value: userName, primary: true }],
    }),
  )
const createGroup = async (displayName: string, members: string[] = []) =>
  created(await call('POST', '/Groups', { schemas: [GROUP], displayName, members: members.map((value) => ({ value })) }))

const gavin = await createUser('gavin@hooli.example')
const denpok = await createUser('denpok@hooli.example')
const jack = await createUser('jack@hooli.example')

t.test('a created Group answers 201 with its members, Location and ETag', async (t) => {
  const response = await call('POST', '/Groups', {
    schemas: [GROUP],
    displayName: 'Executives',
    externalId: 'okta-grp-1',
    members: [{ value: gavin, display: 'Gavin Belson' }, { value: denpok }],
  })
  t.equal(response.statusCode, 201)
  const group = response.json()
  t.equal(response.headers.location, group.meta.location)
  t.equal(response.headers.etag, group.meta.version)
  t.match(group, { schemas: [GROUP], displayName: 'Executives', externalId: 'okta-grp-1', meta: { resourceType: 'Group' } })
  const members = group.members.map((member: { value: string; display: string; type: string }) => [
    member.value,
    member.display,
    member.type,
  ])
  t.same(
    members.sort(),
    [
      [gavin, 'Gavin Belson', 'User'],
      [denpok, 'denpok@hooli.example', 'User'],
    ].sort(),
    'display as sent, else the userName',
  )
  const user = (await call('GET', `/Users/${gavin}`)).json()
  t.same(
    user.groups.map((entry: { value: string; display: string }) => [entry.value, entry.display]),
    [[group.id, 'Executives']],
    'the User lists its groups',
  )
})

t.test('displayName is unique per organization, case-insensitively, on POST, PUT and PATCH', async (t) => {
  const first = await createGroup('Engineering')
  const second = await createGroup('Sales')
  for (const response of [
    await call('POST', '/Groups', { schemas: [GROUP], displayName: 'ENGINEERING' }),
    await call('PUT', `/Groups/${second}`, { schemas: [GROUP], displayName: 'engineering' }),
    await patch(second, [{ op: 'replace', path: 'displayName', value: 'Engineering' }]),
  ]) {
    t.match({ status: response.statusCode, body: response.json() }, { status: 409, body: { scimType: 'uniqueness', status: '409' } })
  }
  t.equal((await call('GET', `/Groups/${second}`)).json().displayName, 'Sales')
  t.equal((await call('GET', `/Groups/${first}`)).json().displayName, 'Engineering')
})

t.test('member add, remove by filter, remove by value list, replace and remove all', async (t) => {
  const group = await createGroup('Nucleus')

  t.test('Okta adds with a list of values', async (t) => {
    t.equal(
      (await patch(group, [{ op: 'add', path: 'members', value: [{ value: gavin, display: 'Gavin' }, { value: jack }] }])).statusCode,
      204,
    )
    t.same(await memberIds(group), [gavin, jack].sort())
  })
  t.test('adding a member twice keeps one', async (t) => {
    t.equal((await patch(group, [{ op: 'Add', path: 'members', value: [{ value: gavin }] }])).statusCode, 204)
    t.same(await memberIds(group), [gavin, jack].sort())
  })
  t.test('Entra removes by value list', async (t) => {
    t.equal((await patch(group, [{ op: 'Remove', path: 'members', value: [{ value: jack }] }])).statusCode, 204)
    t.same(await memberIds(group), [gavin])
  })
  t.test('Okta removes by filter', async (t) => {
    await patch(group, [{ op: 'add', path: 'members', value: [{ value: denpok }] }])
    t.equal((await patch(group, [{ op: 'remove', path: `members[value eq "${gavin}"]` }])).statusCode, 204)
    t.same(await memberIds(group), [denpok])
  })
  t.test('path-less add of members', async (t) => {
    t.equal((await patch(group, [{ op: 'add', value: { members: [{ value: jack }] } }])).statusCode, 204)
    t.same(await memberIds(group), [denpok, jack].sort())
  })
  t.test('replace sets the whole list', async (t) => {
    t.equal((await patch(group, [{ op: 'replace', path: 'members', value: [{ value: gavin }] }])).statusCode, 204)
    t.same(await memberIds(group), [gavin])
  })
  t.test('remove all', async (t) => {
    t.equal((await patch(group, [{ op: 'remove', path: 'members' }])).statusCode, 204)
    t.same(await memberIds(group), [])
  })
  t.test('rename and add in one request, atomically', async (t) => {
    const before = (await call('GET', `/Groups/${group}`)).json()
    const refused = await patch(group, [
      { op: 'add', path: 'members', value: [{ value: gavin }] },
      { op: 'replace', path: 'displayName', value: '' },
    ])
    t.equal(refused.statusCode, 400)
    t.same((await call('GET', `/Groups/${group}`)).json(), before, 'nothing of it applied')
    t.equal(
      (
        await patch(group, [
          { op: 'add', path: 'members', value: [{ value: gavin }] },
          { op: 'replace', path: 'displayName', value: 'Nucleus 2' },
        ])
      ).statusCode,
      204,
    )
    t.match((await call('GET', `/Groups/${group}`)).json(), { displayName: 'Nucleus 2', members: [{ value: gavin }] })
  })
  t.test('the audit log records who was added and removed, by the token', async (t) => {
    const entries = await db
      .selectFrom('core.auditLogs')
      .select(['action', 'actorType', 'changes'])
      .where('entityId', '=', group)
      .orderBy('createdAt')
      .execute()
    t.equal(entries[0]?.action, 'scim_group.created')
    t.ok(entries.every((entry) => entry.actorType === 'scim_token'))
    t.ok(entries.some((entry) => JSON.stringify(entry.changes).includes(jack)))
  })
})

t.test('members that are not Users of the organization are left out, and stale references do not block the rest', async (t) => {
  const other = await scimOrganization(t, 'piedpiper')
  const richard = (
    await other.app.inject({
      method: 'POST',
      url: `${SCIM}/Users`,
      headers: other.scim,
      payload: { userName: 'richard@piedpiper.example' },
    })
  ).json().id
  const group = await createGroup('Mixed', [gavin])
  t.equal(
    (await patch(group, [{ op: 'add', path: 'members', value: [{ value: richard }, { value: 'string id 1' }, { value: jack }] }]))
      .statusCode,
    204,
  )
  t.same(await memberIds(group), [gavin, jack].sort())
  const rows = await db.selectFrom('core.scimGroupMembers').select('memberId').where('groupId', '=', group).execute()
  t.notOk(rows.some((row) => row.memberId === richard))
})

t.test('excludedAttributes=members and attributes=displayName leave the members out', async (t) => {
  const group = await createGroup('Board', [gavin])
  t.notOk('members' in (await call('GET', `/Groups/${group}?excludedAttributes=members`)).json())
  const listed = (await call('GET', `/Groups?filter=${encodeURIComponent('displayName eq "board"')}&attributes=displayName`)).json()
  t.same(listed.Resources, [{ displayName: 'Board', id: group, schemas: [GROUP] }])
})

t.test('filters on Groups: displayName, externalId, members', async (t) => {
  const group = await createGroup('Hooli XYZ', [denpok])
  await call('PUT', `/Groups/${group}`, { schemas: [GROUP], displayName: 'Hooli XYZ', externalId: 'Ext-XYZ', members: [{ value: denpok }] })
  const count = async (filter: string) => (await call('GET', `/Groups?filter=${encodeURIComponent(filter)}`)).json().totalResults
  t.equal(await count('displayName eq "HOOLI xyz"'), 1)
  t.equal(await count('externalId eq "Ext-XYZ"'), 1)
  t.equal(await count('externalId eq "ext-xyz"'), 0, 'externalId is case-exact')
  t.equal(await count(`members[value eq "${denpok}"] and displayName sw "Hooli"`), 1)
  t.equal(
    await count(`members eq "${denpok}"`),
    (await call('GET', `/Groups?filter=${encodeURIComponent(`members.value eq "${denpok}"`)}`)).json().totalResults,
  )
  const invalid = await call('GET', `/Groups?filter=${encodeURIComponent('members.display eq "x"')}`)
  t.match({ status: invalid.statusCode, body: invalid.json() }, { status: 400, body: { scimType: 'invalidFilter' } })
})

t.test('PUT replaces name and members', async (t) => {
  const group = await createGroup('Moonshots', [gavin, jack])
  const response = await call('PUT', `/Groups/${group}`, { schemas: [GROUP], displayName: 'Moonshots', members: [{ value: denpok }] })
  t.equal(response.statusCode, 200)
  t.same(
    response.json().members.map((member: { value: string }) => member.value),
    [denpok],
  )
  const cleared = await call('PUT', `/Groups/${group}`, { schemas: [GROUP], displayName: 'Moonshots' })
  t.same(cleared.json().members, [])
})

t.test('a Group bound to product roles grants them to its members, and takes them back', async (t) => {
  const person = await service.signIn('big-head@hooli.example')
  const member = await createUser('big-head@hooli.example')
  const group = await createGroup('On-call', [])
  const bindings = `/api/v1/organizations/${orgId}/scim-groups`
  const bound = await app.inject({
    method: 'PUT',
    url: `${bindings}/${group}/product-roles`,
    headers: owner.headers,
    payload: { productRoles: { alerting: 'responder' } },
  })
  t.equal(bound.statusCode, 200)
  t.match(bound.json(), { id: group, displayName: 'On-call', productRoles: { alerting: 'responder' }, memberCount: 0 })

  const roleOf = async () => await db.selectFrom('core.orgProductRoles').select('role').where('memberId', '=', member).execute()
  t.same(await roleOf(), [], 'no direct role')
  t.equal(await findProductRole(db, orgId, member, 'alerting'), undefined)
  await patch(group, [{ op: 'add', path: 'members', value: [{ value: member }] }])
  t.equal(await findProductRole(db, orgId, member, 'alerting'), 'responder', 'granted through the group')
  await app.inject({
    method: 'PUT',
    url: `/api/v1/organizations/${orgId}/members/${member}/product-roles`,
    headers: owner.headers,
    payload: { productRoles: { alerting: 'manager' } },
  })
  t.equal(await findProductRole(db, orgId, member, 'alerting'), 'manager', 'the higher of direct and group roles')
  await app.inject({
    method: 'PUT',
    url: `/api/v1/organizations/${orgId}/members/${member}/product-roles`,
    headers: owner.headers,
    payload: { productRoles: {} },
  })
  await patch(group, [{ op: 'remove', path: `members[value eq "${member}"]` }])
  t.equal(await findProductRole(db, orgId, member, 'alerting'), undefined, 'leaving the group takes it back')

  const listed = await app.inject({ method: 'GET', url: bindings, headers: owner.headers })
  t.ok(listed.json().data.some((entry: { id: string }) => entry.id === group))
  t.equal((await app.inject({ method: 'GET', url: bindings, headers: person.headers })).statusCode, 403, 'members cannot see bindings')
  t.equal(
    (
      await app.inject({
        method: 'PUT',
        url: `${bindings}/${group}/product-roles`,
        headers: owner.headers,
        payload: { productRoles: { alerting: 'overlord' } },
      })
    ).statusCode,
    400,
  )
  t.equal(
    (
      await app.inject({
        method: 'PUT',
        url: `${bindings}/00000000-0000-4000-8000-000000000000/product-roles`,
        headers: owner.headers,
        payload: { productRoles: {} },
      })
    ).statusCode,
    404,
  )
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('action')
    .where('entityId', '=', group)
    .where('actorType', '=', 'user')
    .execute()
  t.same(
    audit.map((entry) => entry.action),
    ['scim_group.product_roles_set'],
  )
})

t.test('another organization cannot reach these Groups or bind them', async (t) => {
  const group = await createGroup('Private', [gavin])
  const other = await scimOrganization(t, 'endframe')
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
    const payload =
      method === 'PUT'
        ? { displayName: 'Taken' }
        : method === 'PATCH'
          ? { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'members' }] }
          : undefined
    const response = await other.app.inject({
      method,
      url: `${SCIM}/Groups/${group}`,
      headers: { ...other.scim, 'content-type': 'application/json' },
      payload: payload && JSON.stringify(payload),
    })
    t.equal(response.statusCode, 404, method)
  }
  const bindings = await other.app.inject({
    method: 'PUT',
    url: `/api/v1/organizations/${other.orgId}/scim-groups/${group}/product-roles`,
    headers: other.owner.headers,
    payload: { productRoles: { alerting: 'admin' } },
  })
  t.equal(bindings.statusCode, 404)
  t.same(await memberIds(group), [gavin])
})

t.test('DELETE removes the Group and its memberships, not the Users', async (t) => {
  const group = await createGroup('Doomed', [jack])
  t.equal((await call('DELETE', `/Groups/${group}`)).statusCode, 204)
  t.equal((await call('GET', `/Groups/${group}`)).statusCode, 404)
  t.equal((await call('GET', `/Users/${jack}`)).statusCode, 200)
  t.same(await db.selectFrom('core.scimGroupMembers').select('memberId').where('groupId', '=', group).execute(), [])
  t.equal((await call('DELETE', `/Groups/${group}`)).statusCode, 404)
})

t.test('deprovisioning a User takes it out of its groups', async (t) => {
  const temp = await createUser('temp@hooli.example')
  const group = await createGroup('Temps', [temp, gavin])
  t.equal((await call('DELETE', `/Users/${temp}`)).statusCode, 204)
  t.same(await memberIds(group), [gavin])
})

t.test('concurrent member additions to one group lose none of them', async (t) => {
  const group = await createGroup('Busy')
  const people = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => createUser(`busy-${name}@hooli.example`)))
  const answers = await Promise.all(people.map((id) => patch(group, [{ op: 'add', path: 'members', value: [{ value: id }] }])))
  t.same(
    answers.map((response) => response.statusCode),
    [204, 204, 204, 204, 204],
  )
  t.same(await memberIds(group), [...people].sort())
})
