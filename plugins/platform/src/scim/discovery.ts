import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ScimError } from './errors.js'
import { IdParams, ListResponse, ScimDocument, scimErrors } from './http-schemas.js'
import { listResponse, MAX_PAGE_SIZE } from './list.js'
import { scimBaseUrl as baseUrl } from './resource-meta.js'
import type { JsonObject } from './schema/canonical.js'
import { ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA, schemas } from './schema/definitions.js'

// Discovery (RFC 7644 §4): what this server supports, exactly. Bulk, sorting and password
// changes are not offered; PATCH, filters and ETags are.

const tags = ['scim']
const config = { scim: true }
const Document = ScimDocument
const DocumentList = ListResponse(ScimDocument)

function serviceProviderConfig(base: string): JsonObject {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE_SIZE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: 'A SCIM token of the organization (POST /api/v1/organizations/:orgId/scim-tokens), sent as Authorization: Bearer',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  }
}

function schemaDocuments(base: string): JsonObject[] {
  return schemas.map((schema) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    ...(JSON.parse(JSON.stringify(schema)) as JsonObject),
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${schema.id}` },
  }))
}

function resourceTypeDocuments(base: string): JsonObject[] {
  const resourceType = (id: string, description: string, schema: string, extensions: string[]): JsonObject => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id,
    name: id,
    endpoint: `/${id}s`,
    description,
    schema,
    schemaExtensions: extensions.map((extension) => ({ schema: extension, required: false })),
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${id}` },
  })
  return [resourceType('User', 'User Account', USER_SCHEMA, [ENTERPRISE_USER_SCHEMA]), resourceType('Group', 'Group', GROUP_SCHEMA, [])]
}

function byId(documents: JsonObject[], id: string, what: string): JsonObject {
  const found = documents.find((document) => typeof document.id === 'string' && document.id.toLowerCase() === id.toLowerCase())
  if (!found) throw new ScimError(404, `${what} ${id} not found`)
  return found
}

export const scimDiscoveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const notAllowed = async () => {
    throw new ScimError(405, 'discovery endpoints are read-only')
  }
  const readOnly = (url: string) =>
    app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url, config, schema: { hide: true }, handler: notAllowed })

  app.get(
    '/ServiceProviderConfig',
    { config, schema: { tags, summary: 'What this SCIM server supports', response: { 200: Document, ...scimErrors } } },
    async (request) => serviceProviderConfig(baseUrl(request)),
  )
  readOnly('/ServiceProviderConfig')

  app.get(
    '/Schemas',
    {
      config,
      schema: {
        tags,
        summary: 'The supported schemas: core User, enterprise User extension, Group',
        response: { 200: DocumentList, ...scimErrors },
      },
    },
    async (request) => {
      const documents = schemaDocuments(baseUrl(request))
      return listResponse(documents, documents.length, 1)
    },
  )
  app.get(
    '/Schemas/:id',
    { config, schema: { tags, summary: 'One schema, by its URN', params: IdParams, response: { 200: Document, ...scimErrors } } },
    async (request) => byId(schemaDocuments(baseUrl(request)), request.params.id, 'schema'),
  )
  readOnly('/Schemas')
  readOnly('/Schemas/:id')

  app.get(
    '/ResourceTypes',
    { config, schema: { tags, summary: 'The resource types: User and Group', response: { 200: DocumentList, ...scimErrors } } },
    async (request) => {
      const documents = resourceTypeDocuments(baseUrl(request))
      return listResponse(documents, documents.length, 1)
    },
  )
  app.get(
    '/ResourceTypes/:id',
    { config, schema: { tags, summary: 'One resource type', params: IdParams, response: { 200: Document, ...scimErrors } } },
    async (request) => byId(resourceTypeDocuments(baseUrl(request)), request.params.id, 'resource type'),
  )
  readOnly('/ResourceTypes')
  readOnly('/ResourceTypes/:id')
}
