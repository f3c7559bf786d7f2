import t from 'tap'
import { SCIM, scimOrganization } from './scim-setup.js'

// PATCH paths and value keys name schema attributes, or the request is refused and nothing
// changes, in the database or in the process (GHSA-9m6g-wc8r-q59c, GHSA-2mhw-wcx5-v3xj).

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User'
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group'
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

const { app, owner, scim } = await scimOrganization(t, 'umbrella')

/** The body is sent as written: a JavaScript object literal would turn `"__proto__"` into a prototype. */
const patchRaw = (resource: string, id: string, operations: string) =>
  app.inject({
    method: 'PATCH',
    url: `${SCIM}/${resource}/${id}`,
    headers: { ...scim, 'content-type': 'application/scim+json' },
    payload: `{"schemas":["${PATCH_OP}"],"Operations":[${operations}]}`,
  })
const read = async (resource: string, id: string) =>
  (await app.inject({ method: 'GET', url: `${SCIM}/${resource}/${id}`, headers: scim })).json()

async function create(resource: string, body: unknown): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: `${SCIM}/${resource}`,
    headers: { ...scim, 'content-type': 'application/scim+json' },
    payload: JSON.stringify(body),
  })
  if (response.statusCode !== 201) throw new Error(`creating a ${resource}: ${response.statusCode} ${response.body}`)
  return response.json().id
}

const userId = await create('Users', {
  schemas: [USER],
  userName: 'alice@umbrella.example',
  name: { givenName: 'Alice', familyName: 'Abernathy' },
})
const groupId = await create('Groups', { schemas: [GROUP], displayName: 'Security', members: [{ value: userId }] })
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort()

// A literal `"__proto__"` key, or `"constructor"` holding `"prototype"`, is refused by the JSON
// parser itself (Fastify's onProtoPoisoning and onConstructorPoisoning): invalidSyntax.
const refusals: Array<[resource: 'Users' | 'Groups', operation: string, scimType: string]> = [
  ['Users', '{"op":"add","path":"__proto__.alerting","value":"admin"}', 'invalidPath'],
  ['Users', '{"op":"replace","path":"__proto__","value":{"alerting":"admin"}}', 'invalidPath'],
  ['Users', '{"op":"add","path":"constructor.prototype.alerting","value":"admin"}', 'invalidPath'],
  ['Users', '{"op":"add","path":"prototype","value":"admin"}', 'invalidPath'],
  ['Users', '{"op":"add","path":"toString.x","value":"admin"}', 'invalidPath'],
  ['Users', '{"op":"add","path":"name.__proto__","value":{"alerting":"admin"}}', 'invalidPath'],
  ['Users', `{"op":"add","path":"${ENTERPRISE}:__proto__","value":{"alerting":"admin"}}`, 'invalidPath'],
  ['Users', '{"op":"add","path":"emails[__proto__ eq \\"x\\"].value","value":"x"}', 'invalidPath'],
  ['Users', '{"op":"remove","path":"__proto__.alerting"}', 'invalidPath'],
  ['Users', '{"op":"add","value":{"__proto__.alerting":"admin"}}', 'invalidValue'],
  ['Users', '{"op":"add","value":{"__proto__":{"alerting":"admin"}}}', 'invalidSyntax'],
  ['Users', '{"op":"add","value":{"constructor":{"prototype":{"alerting":"admin"}}}}', 'invalidSyntax'],
  ['Users', `{"op":"add","value":{"${ENTERPRISE}":{"__proto__":{"alerting":"admin"}}}}`, 'invalidSyntax'],
  ['Users', '{"op":"add","path":"name","value":{"__proto__":{"alerting":"admin"}}}', 'invalidSyntax'],
  ['Users', '{"op":"add","path":"emails","value":[{"value":"a@b.example","__proto__":{"alerting":"admin"}}]}', 'invalidSyntax'],
  ['Users', '{"op":"replace","path":"title","value":{"__proto__":{"alerting":"admin"}}}', 'invalidSyntax'],
  ['Users', '{"op":"add","value":{"constructor":{"name":"admin"}}}', 'invalidValue'],
  ['Users', '{"op":"add","path":"name","value":{"toString":"admin"}}', 'invalidValue'],
  ['Users', '{"op":"replace","path":"nickNameTypo","value":"x"}', 'invalidPath'],
  ['Groups', '{"op":"add","path":"__proto__.alerting","value":"admin"}', 'invalidPath'],
  [
    'Groups',
    '{"op":"add","path":"members","value":[{"value":"00000000-0000-4000-8000-000000000000","__proto__":{"alerting":"admin"}}]}',
    'invalidSyntax',
  ],
  ['Groups', '{"op":"add","value":{"constructor.prototype.alerting":"admin"}}', 'invalidValue'],
]

t.test('prototype names and unknown attributes in PATCH paths and values are refused, and nothing changes', async (t) => {
  const before = { user: await read('Users', userId), group: await read('Groups', groupId) }
  for (const [resource, operation, scimType] of refusals) {
    const response = await patchRaw(resource, resource === 'Users' ? userId : groupId, operation)
    t.equal(response.statusCode, 400, `${resource} ${operation}`)
    t.match(response.json(), { scimType, schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] }, operation)
  }
  t.same(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys, 'Object.prototype has no new key')
  t.equal(({} as Record<string, unknown>).alerting, undefined)
  t.same(await read('Users', userId), before.user, 'the User is unchanged')
  t.same(await read('Groups', groupId), before.group, 'the Group is unchanged')

  const validated = await app.inject({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: owner.headers,
    payload: { name: 'After the attempt', slug: 'after-the-attempt' },
  })
  t.equal(validated.statusCode, 201, 'an unrelated validated request still succeeds')
})

t.test('a refused operation among valid ones changes nothing', async (t) => {
  const before = await read('Users', userId)
  const response = await patchRaw(
    'Users',
    userId,
    '{"op":"replace","path":"title","value":"CISO"},{"op":"add","path":"__proto__.x","value":1}',
  )
  t.equal(response.statusCode, 400)
  t.same(await read('Users', userId), before)
})

t.test('paths and keys in any letter case, behind the schema URN, still resolve', async (t) => {
  const response = await patchRaw(
    'Users',
    userId,
    `{"op":"replace","path":"${USER}:NAME.GIVENNAME","value":"Alicia"},{"op":"add","value":{"${ENTERPRISE}":{"Department":"R&D"}}},{"op":"replace","path":"EXTERNALID","value":"ext-1"}`,
  )
  t.equal(response.statusCode, 204, response.body)
  t.match(await read('Users', userId), {
    name: { givenName: 'Alicia', familyName: 'Abernathy' },
    externalId: 'ext-1',
    [ENTERPRISE]: { department: 'R&D' },
  })
})

t.test('read-only attributes are refused with mutability', async (t) => {
  for (const operation of ['{"op":"replace","path":"id","value":"x"}', `{"op":"add","path":"groups","value":[{"value":"${groupId}"}]}`]) {
    const response = await patchRaw('Users', userId, operation)
    t.equal(response.statusCode, 400, operation)
    t.equal(response.json().scimType, 'mutability')
  }
})

t.test('Entra: the enterprise extension, with manager as a plain string on its URN path', async (t) => {
  const patched = await patchRaw(
    'Users',
    userId,
    [
      `{"op":"Add","path":"${ENTERPRISE}:manager","value":"boss-id"}`,
      `{"op":"Replace","path":"${ENTERPRISE}:employeeNumber","value":"701984"}`,
      `{"op":"Add","path":"${ENTERPRISE}:costCenter","value":"4130"}`,
      `{"op":"Add","path":"${ENTERPRISE}:organization","value":"Umbrella"}`,
      `{"op":"Add","path":"${ENTERPRISE}:division","value":"Research"}`,
    ].join(','),
  )
  t.equal(patched.statusCode, 204, patched.body)
  t.match((await read('Users', userId))[ENTERPRISE], {
    manager: { value: 'boss-id' },
    employeeNumber: '701984',
    costCenter: '4130',
    organization: 'Umbrella',
    division: 'Research',
  })
  const object = await patchRaw('Users', userId, `{"op":"Replace","path":"${ENTERPRISE}:manager","value":{"value":"other-boss"}}`)
  t.equal(object.statusCode, 204)
  t.same((await read('Users', userId))[ENTERPRISE].manager, { value: 'other-boss' }, 'the object shape too')
  // Some Entra tenants send the manager as a one-element list with a null $ref.
  const listed = await patchRaw(
    'Users',
    userId,
    `{"op":"Replace","path":"${ENTERPRISE}:manager","value":[{"$ref":null,"value":"list-boss"}]}`,
  )
  t.equal(listed.statusCode, 204, listed.body)
  t.same((await read('Users', userId))[ENTERPRISE].manager, { value: 'list-boss' }, 'the single manager of the list')
  const two = await patchRaw('Users', userId, `{"op":"Replace","path":"${ENTERPRISE}:manager","value":[{"value":"a"},{"value":"b"}]}`)
  t.equal(two.statusCode, 400, 'two managers are still not one')
  t.equal(two.json().scimType, 'invalidValue')
  t.same((await read('Users', userId))[ENTERPRISE].manager, { value: 'list-boss' }, 'and change nothing')
  // Entra's Add of a plain string over a manager already set, and alone on a user without one.
  const over = await patchRaw('Users', userId, `{"op":"Add","path":"${ENTERPRISE}:manager","value":"string-boss"}`)
  t.equal(over.statusCode, 204, over.body)
  t.same((await read('Users', userId))[ENTERPRISE].manager, { value: 'string-boss' }, 'a plain string replaces the manager set before')
  const schemas = (await app.inject({ method: 'GET', url: `${SCIM}/Schemas/${ENTERPRISE}`, headers: scim })).json()
  t.same(schemas.attributes.map((attribute: { name: string }) => attribute.name).sort(), [
    'costCenter',
    'department',
    'division',
    'employeeNumber',
    'manager',
    'organization',
  ])
})

t.test('every SCIM answer is a SCIM error body, router errors included, and deep filters are refused', async (t) => {
  for (const [method, path, status] of [
    ['GET', `/Users/${'a'.repeat(1024)}`, 414],
    ['GET', '/Nope', 404],
    ['PUT', '/Users', 404],
    ['DELETE', '/ServiceProviderConfig', 405],
    ['GET', `/Users?filter=${encodeURIComponent(`${'('.repeat(5000)}userName eq "x"${')'.repeat(5000)}`)}`, 400],
    ['GET', `/Users?filter=${encodeURIComponent(Array.from({ length: 101 }, () => 'userName eq "x"').join(' or '))}`, 400],
  ] as const) {
    const response = await app.inject({ method, url: `${SCIM}${path}`, headers: scim })
    t.equal(response.statusCode, status, `${method} ${path.slice(0, 40)}`)
    t.match(response.headers['content-type'], /^application\/scim\+json/)
    t.match(response.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status) })
    if (status === 400) t.equal(response.json().scimType, 'invalidFilter')
  }
  const api = await app.inject({ method: 'GET', url: `/api/v1/organizations/${'b'.repeat(1024)}`, headers: owner.headers })
  t.equal(api.statusCode, 414)
  t.match(api.json(), { statusCode: 414, code: 'URI_TOO_LONG' })
  t.notMatch(api.body, 'bbbbbbbb', 'the path is not echoed')
})
