import t from 'tap'
import { SCIM, scimOrganization } from './scim-setup.js'

const { app, scim } = await scimOrganization(t, 'discovery')
const get = (path: string) => app.inject({ method: 'GET', url: `${SCIM}${path}`, headers: scim })

t.test('ServiceProviderConfig says exactly what is supported', async (t) => {
  const response = await get('/ServiceProviderConfig')
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/scim\+json/)
  t.match(response.json(), {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false },
    filter: { supported: true, maxResults: 1000 },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [{ type: 'oauthbearertoken', primary: true }],
  })
})

t.test('Schemas: core User, the enterprise extension and Group, each also by its URN', async (t) => {
  const list = (await get('/Schemas')).json()
  t.same(
    list.Resources.map((schema: { id: string }) => schema.id),
    [
      'urn:ietf:params:scim:schemas:core:2.0:User',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      'urn:ietf:params:scim:schemas:core:2.0:Group',
    ],
  )
  t.match(list, { totalResults: 3, itemsPerPage: 3, startIndex: 1 })
  const user = (await get('/Schemas/urn:ietf:params:scim:schemas:core:2.0:User')).json()
  t.match(user, { name: 'User', meta: { resourceType: 'Schema' } })
  const userName = user.attributes.find((attribute: { name: string }) => attribute.name === 'userName')
  t.match(userName, { type: 'string', required: true, uniqueness: 'server', caseExact: false })
  t.match(
    user.attributes.find((attribute: { name: string }) => attribute.name === 'password'),
    { mutability: 'writeOnly', returned: 'never' },
  )
  t.equal((await get('/Schemas/urn:example:unknown')).statusCode, 404)
})

t.test('ResourceTypes: User with the enterprise extension, and Group', async (t) => {
  const list = (await get('/ResourceTypes')).json()
  t.same(
    list.Resources.map((type: { id: string; endpoint: string }) => [type.id, type.endpoint]),
    [
      ['User', '/Users'],
      ['Group', '/Groups'],
    ],
  )
  t.match((await get('/ResourceTypes/user')).json(), {
    id: 'User',
    schemaExtensions: [{ schema: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User', required: false }],
  })
  t.equal((await get('/ResourceTypes/Device')).statusCode, 404)
})

t.test('discovery endpoints are read-only: 405', async (t) => {
  for (const path of ['/ServiceProviderConfig', '/Schemas', '/ResourceTypes', '/Schemas/x', '/ResourceTypes/User']) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const response = await app.inject({
        method,
        url: `${SCIM}${path}`,
        headers: { ...scim, 'content-type': 'application/scim+json' },
        payload: '{}',
      })
      t.equal(response.statusCode, 405, `${method} ${path}`)
      t.match(response.json(), { status: '405', schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] })
    }
  }
})

t.test('discovery needs the SCIM token too', async (t) => {
  t.equal((await app.inject({ method: 'GET', url: `${SCIM}/ServiceProviderConfig` })).statusCode, 401)
})

t.test('a PATCH path scim-patch cannot follow is a 400, never a 500', async (t) => {
  const user = (
    await app.inject({
      method: 'POST',
      url: `${SCIM}/Users`,
      headers: scim,
      payload: { userName: 'paths@discovery.example', name: { givenName: 'A' } },
    })
  ).json()
  for (const path of ['name[givenName eq "A"].x', 'emails[type eq "work"', 'emails[type eq "home"]']) {
    const response = await app.inject({
      method: 'PATCH',
      url: `${SCIM}/Users/${user.id}`,
      headers: scim,
      payload: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path, value: 'x' }] },
    })
    t.equal(response.statusCode, 400, path)
    t.match(response.json(), { status: '400', scimType: /^(invalidPath|invalidSyntax|noTarget)$/ }, path)
  }
})

t.test('comparing with null finds what is absent', async (t) => {
  const count = async (filter: string) => (await get(`/Users?filter=${encodeURIComponent(filter)}`)).json().totalResults
  t.equal(await count('title eq null'), 2)
  t.equal(await count('title ne null'), 0)
  t.equal((await get(`/Users?filter=${encodeURIComponent('title co null')}`)).statusCode, 400)
})

t.test('the SCIM, SCIM group and SSO routes are in the OpenAPI document, metadata as public', async (t) => {
  const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json()
  for (const [path, method] of [
    ['/api/v1/scim/v2/Users', 'get'],
    ['/api/v1/scim/v2/Users', 'post'],
    ['/api/v1/scim/v2/Users/{id}', 'patch'],
    ['/api/v1/scim/v2/Groups/{id}', 'put'],
    ['/api/v1/scim/v2/ServiceProviderConfig', 'get'],
    ['/api/v1/organizations/{orgId}/scim-groups/{groupId}/product-roles', 'put'],
    ['/api/v1/organizations/{orgId}/sso', 'post'],
    ['/api/v1/organizations/{orgId}/sso/metadata', 'get'],
  ] as const) {
    t.ok(document.paths[path]?.[method], `${method.toUpperCase()} ${path}`)
  }
  t.same(document.paths['/api/v1/organizations/{orgId}/sso/metadata'].get.security, [])
  t.ok(
    document.paths['/api/v1/scim/v2/Users'].get.responses['4XX'] ?? document.paths['/api/v1/scim/v2/Users'].get.responses['4xx'],
    'SCIM errors are documented',
  )
})
