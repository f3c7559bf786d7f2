import { randomUUID } from 'node:crypto'
import t from 'tap'
import { SCIM, scimOrganization } from './scim-setup.js'
import { playRunscope, type RunscopeStep } from './conformance/runscope.js'
import { readSuite } from './conformance/suites.js'

// Replays Okta's SCIM 2.0 SPEC test (the Runscope export Okta asks integrators to pass) over
// real HTTP. Its first step reads the first User of the list and requires a name and an
// e-mail: here that is the organization's owner, who signed in with an ID token carrying
// given_name and family_name, as identity providers send them. The one script step (counting
// groups, for a log line) and the response-time assertion are not replayed.

const { app, scim, owner, service } = await scimOrganization(t, 'atko')
const address = await app.listen({ host: '127.0.0.1', port: 0 })

const withNames = service.issuer.idp.mintIdToken({ email: owner.email, givenName: 'Olga', familyName: 'Owner' })
const signedIn = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${withNames}` } })
if (signedIn.statusCode !== 200) throw new Error(`the owner's sign-in: ${signedIn.body}`)

const suffix = randomUUID().slice(0, 8)
const variables = new Map([
  ['SCIMBaseURL', `${address}${SCIM}`],
  ['auth', scim.authorization],
  ['InvalidUserEmail', `nobody-${suffix}@atko.example`],
  ['UserIdThatDoesNotExist', randomUUID()],
  ['randomEmail', `runscope-${suffix}@atko.example`],
  ['randomUsername', `Runscope-${suffix}@atko.example`],
  ['randomUsernameCaps', `RUNSCOPE-${suffix.toUpperCase()}@ATKO.EXAMPLE`],
  ['randomGivenName', 'Ruth'],
  ['randomFamilyName', 'Scope'],
])

t.test('every step of the Okta SPEC test passes', async (t) => {
  const results = await playRunscope(readSuite<{ steps: RunscopeStep[] }>('okta-scim-spec-test.json').steps, variables)
  t.equal(results.length, 12, 'its twelve requests were sent')
  for (const result of results) {
    for (const check of result.checks) t.ok(check.passed, `${result.note}: ${check.description}`)
  }
})

t.test('the user Okta created is found whatever the letter case of its userName', async (t) => {
  const caps = variables.get('randomUsernameCaps') ?? ''
  const found = await app.inject({
    method: 'GET',
    url: `${SCIM}/Users?filter=${encodeURIComponent(`userName eq "${caps}"`)}`,
    headers: scim,
  })
  t.equal(found.json().totalResults, 1)
  t.equal(found.json().Resources[0].userName, variables.get('randomUsername'), 'stored as sent')
  t.equal(found.json().Resources[0].id, variables.get('idUserOne'))
})
