import t from 'tap'
import { apiTags, operationIdOf } from '../src/openapi-names.js'

t.test('an operation is named by its method and its path', async (t) => {
  t.equal(operationIdOf('GET', '/api/v1/organizations'), 'getOrganizations')
  t.equal(operationIdOf('GET', '/api/v1/organizations/:orgId'), 'getOrganizationsByOrgId')
  t.equal(operationIdOf('POST', '/api/v1/organizations/:orgId/invitations/:invitationId/resend'), 'postOrganizationsInvitationsResend')
  t.equal(operationIdOf('DELETE', '/api/v1/organizations/:orgId/invitations/:invitationId'), 'deleteOrganizationsInvitationsByInvitationId')
  t.equal(operationIdOf('PUT', '/api/v1/organizations/:orgId/members/:memberId/product-roles'), 'putOrganizationsMembersProductRoles')
  t.equal(operationIdOf('POST', '/v2/enqueue'), 'postV2Enqueue', 'paths outside /api/v1 keep every segment')
  t.equal(operationIdOf('GET', '/api/v1/statuspages/public/:slug/api/v2/summary.json'), 'getStatuspagesPublicApiV2SummaryJson')
  t.equal(operationIdOf('POST', '/auth/set-cookie'), 'postAuthSetCookie')
})

t.test('every tag is described', async (t) => {
  for (const [name, description] of Object.entries(apiTags)) t.ok(description.length > 10, name)
})
