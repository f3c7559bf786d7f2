import { randomUUID } from 'node:crypto'
import t from 'tap'
import { SCIM, scimOrganization } from './scim-setup.js'
import { playRunscope, type RunscopeStep } from './conformance/runscope.js'
import { readSuite } from './conformance/suites.js'

// Replays Okta's SCIM 2.0 SPEC test (the Runscope export Okta asks integrators to pass) over
// real HTTP. Its first step expects the application to hold a user with a name and an e-mail:
// here that is the organization's owner, whom Okta would have matched by userName and updated
// before; the setup does that update. The one script step (counting groups, for a log line) and
// the response-time assertion are not replayed.

const { app, scim, owner } = await scimOrganization(t, 'atko')
const address = await app.listen({ host: '127.0.0.1', port: 0 })

const ownerId = (await app.inject({ method: 'GET', url: `${SCIM}/Users?filter=userName eq "${owner.email}"`, headers: scim })).json().Resources[0].id
const matched = await app.inject({
  method: 'PUT',
  url: `${SCIM}/Users/${ownerId}`,
  headers: scim,
  payload: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: owner.email, name: { givenName: 'Olga', familyName: 'Owner' }, emails: [{ value: owner.email, primary: true }], active: true },
})
if (matched.statusCode !== 200) throw new Error(`matching the owner: ${matched.body}`)

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
  const found = await app.inject({ method: 'GET', url: `${SCIM}/Users?filter=${encodeURIComponent(`userName eq "${caps}"`)}`, headers: scim })
  t.equal(found.json().totalResults, 1)
  t.equal(found.json().Resources[0].userName, variables.get('randomUsername'), 'stored as sent')
  t.equal(found.json().Resources[0].id, variables.get('idUserOne'))
})
