import t from 'tap'
import { SCIM, scimOrganization } from './scim-setup.js'

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User'
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'

const { app, scim, owner } = await scimOrganization(t, 'umbrella')
const list = (query: string) => app.inject({ method: 'GET', url: `${SCIM}/Users?${query}`, headers: scim })
const userNames = async (filter: string) => {
  const response = await list(`filter=${encodeURIComponent(filter)}&count=1000`)
  if (response.statusCode !== 200) throw new Error(`${filter}: ${response.body}`)
  return (response.json().Resources as { userName: string }[]).map((user) => user.userName).sort()
}

const people = [
  {
    userName: 'alice@umbrella.example',
    externalId: 'EXT-1',
    name: { givenName: 'Alice', familyName: 'Abernathy' },
    emails: [
      { value: 'alice@umbrella.example', type: 'work', primary: true },
      { value: 'alice@home.example', type: 'home' },
    ],
    title: 'Researcher',
    [ENTERPRISE]: { department: 'Research', manager: { value: 'boss' } },
  },
  {
    userName: 'Bob@Umbrella.example',
    externalId: 'ext-1',
    name: { givenName: 'Bob', familyName: 'Brown' },
    emails: [{ value: 'bob@umbrella.example', type: 'work' }],
    active: false,
    [ENTERPRISE]: { department: 'Security' },
  },
  {
    userName: 'carol@umbrella.example',
    name: { givenName: 'Carol', familyName: 'Carter' },
    emails: [{ value: 'carol@other.example', type: 'work' }],
    title: 'Researcher',
  },
]
for (const person of people) {
  const response = await app.inject({ method: 'POST', url: `${SCIM}/Users`, headers: scim, payload: { schemas: [USER], ...person } })
  if (response.statusCode !== 201) throw new Error(`seeding ${person.userName}: ${response.body}`)
}
const everyone = ['alice@umbrella.example', 'Bob@Umbrella.example', 'carol@umbrella.example', owner.email].sort()

t.test('comparison operators', async (t) => {
  t.same(await userNames('userName eq "BOB@umbrella.EXAMPLE"'), ['Bob@Umbrella.example'], 'userName is case-insensitive')
  t.same(
    await userNames('userName ne "bob@umbrella.example"'),
    everyone.filter((name) => name !== 'Bob@Umbrella.example'),
  )
  t.same(await userNames('userName co "ROL"'), ['carol@umbrella.example'])
  t.same(await userNames('userName sw "a"'), ['alice@umbrella.example'])
  t.same(await userNames('userName ew "UMBRELLA.example"'), everyone)
  t.same(await userNames('userName co "%"'), [], 'LIKE wildcards are literal')
  t.same(await userNames('userName co "_"'), [])
  t.same(await userNames('externalId eq "EXT-1"'), ['alice@umbrella.example'], 'externalId is case-exact')
  t.same(await userNames('externalId eq "ext-1"'), ['Bob@Umbrella.example'])
  t.same(await userNames('title pr'), ['alice@umbrella.example', 'carol@umbrella.example'])
  t.same(await userNames('active eq false'), ['Bob@Umbrella.example'])
  t.same(
    await userNames('active eq "True"'),
    everyone.filter((name) => name !== 'Bob@Umbrella.example'),
  )
  t.same(await userNames('displayName pr'), [])
  t.same(await userNames('name.familyName gt "B"'), ['Bob@Umbrella.example', 'carol@umbrella.example'])
  t.same(await userNames('name.givenName le "Bob"'), ['Bob@Umbrella.example', 'alice@umbrella.example'].sort())
})

t.test('dates compare as dates', async (t) => {
  t.same(await userNames('meta.created gt "2000-01-01T00:00:00Z"'), everyone)
  t.same(await userNames('meta.lastModified lt "2000-01-01T00:00:00Z"'), [])
  t.same(await userNames('meta.Created ge 2015-10-10T14:38:21.8617979-07:00'), everyone, 'unquoted, seven fractional digits')
  const bad = await list(`filter=${encodeURIComponent('meta.created gt "yesterday"')}`)
  t.match({ status: bad.statusCode, body: bad.json() }, { status: 400, body: { scimType: 'invalidFilter' } })
})

t.test('logic: and, or, not and parentheses, with not before and before or', async (t) => {
  t.same(await userNames('title eq "Researcher" and not (emails.value ew "other.example")'), ['alice@umbrella.example'])
  t.same(await userNames('userName sw "alice" or userName sw "bob" and active eq true'), ['alice@umbrella.example'])
  t.same(await userNames('(userName sw "alice" or userName sw "bob") and active eq false'), ['Bob@Umbrella.example'])
  t.same(await userNames('not (title pr)'), ['Bob@Umbrella.example', owner.email].sort())
})

t.test('multi-valued attributes and value paths', async (t) => {
  t.same(await userNames('emails.value eq "ALICE@home.example"'), ['alice@umbrella.example'], 'e-mails are case-insensitive')
  t.same(await userNames('emails eq "carol@other.example"'), ['carol@umbrella.example'], 'a multi-valued attribute alone means its value')
  t.same(await userNames('emails[type eq "work"].value eq "alice@home.example"'), [], 'both conditions hold for the same e-mail')
  t.same(await userNames('emails[type eq "home" and value co "alice"]'), ['alice@umbrella.example'])
  t.same(
    await userNames('emails[primary eq true]'),
    ['alice@umbrella.example', owner.email].sort(),
    'a member who joined without SCIM has its account address as primary',
  )
  t.same(await userNames(`emails.value eq "${owner.email}"`), [owner.email])
  t.same(
    await userNames('emails pr and not (emails.type eq "home")'),
    everyone.filter((name) => name !== 'alice@umbrella.example'),
  )
})

t.test('the enterprise extension by its URN', async (t) => {
  t.same(await userNames(`${ENTERPRISE}:department eq "research"`), ['alice@umbrella.example'])
  t.same(await userNames(`${ENTERPRISE}:manager.value eq "boss"`), ['alice@umbrella.example'])
  t.same(await userNames(`${USER}:userName eq "carol@umbrella.example"`), ['carol@umbrella.example'], 'the core URN is optional')
})

t.test('attribute names and operators are case-insensitive', async (t) => {
  t.same(await userNames('USERNAME EQ "carol@umbrella.example"'), ['carol@umbrella.example'])
  t.same(await userNames('Name.FamilyName Eq "carter"'), ['carol@umbrella.example'])
})

t.test('an unsupported or malformed filter is a 400 invalidFilter, never the unfiltered list', async (t) => {
  for (const filter of [
    'nickName eq "x" and',
    'userName eq',
    'userName like "x"',
    '(userName eq "x"',
    'userName eq "x")',
    'password eq "secret"',
    'unknown eq "x"',
    'active gt true',
    'active eq "maybe"',
    'userName eq true',
    'name eq "x"',
    'emails[type eq "work"',
    'emails.value.more eq "x"',
    'userName eq "unterminated',
    `${ENTERPRISE}:unknown eq "x"`,
    'urn:example:other:User:userName eq "x"',
    'groups.display eq "x"',
    'meta.version eq "x"',
    'userName[value eq "x"]',
    'name.givenName[value eq "x"]',
    '',
  ]) {
    const response = await list(`filter=${encodeURIComponent(filter)}`)
    if (filter === '') {
      t.equal(response.statusCode, 200, 'an empty filter is no filter')
      continue
    }
    t.equal(response.statusCode, 400, filter)
    t.match(response.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '400', scimType: 'invalidFilter' }, filter)
  }
})

t.test('pagination: 1-based startIndex, count, integer totals, stable order', async (t) => {
  const pages = []
  for (const startIndex of [1, 3]) {
    const page = (await list(`startIndex=${startIndex}&count=2`)).json()
    t.match(page, { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 4, itemsPerPage: 2, startIndex })
    pages.push(...page.Resources.map((user: { userName: string }) => user.userName))
  }
  t.same([...pages].sort(), everyone, 'two pages hold everyone once')
  t.same(
    (await list('startIndex=1&count=4')).json().Resources.map((user: { userName: string }) => user.userName),
    pages,
    'the same order in one page',
  )
  t.match((await list('count=0')).json(), { totalResults: 4, itemsPerPage: 0, Resources: [] })
  t.match((await list('startIndex=0&count=1')).json(), { startIndex: 1, itemsPerPage: 1 }, 'startIndex below 1 counts as 1')
  t.match((await list('startIndex=99')).json(), { totalResults: 4, itemsPerPage: 0, startIndex: 99 })
  t.match((await list('count=-5')).json(), { itemsPerPage: 0 })
  t.equal((await list('count=many')).statusCode, 400)
  t.equal((await list('count=many')).json().scimType, 'invalidValue')
})

t.test('attributes and excludedAttributes', async (t) => {
  const only = (
    await list(
      `filter=${encodeURIComponent('userName eq "alice@umbrella.example"')}&attributes=userName,name.givenName,${ENTERPRISE}:department`,
    )
  ).json().Resources[0]
  t.same(Object.keys(only).sort(), ['id', 'name', 'schemas', ENTERPRISE, 'userName'].sort())
  t.same(only.name, { givenName: 'Alice' })
  t.same(only[ENTERPRISE], { department: 'Research' })
  const emails = (await list(`filter=${encodeURIComponent('userName eq "alice@umbrella.example"')}&attributes=emails.value`)).json()
    .Resources[0]
  t.same(emails.emails, [{ value: 'alice@umbrella.example' }, { value: 'alice@home.example' }])
  const without = (
    await list(`filter=${encodeURIComponent('userName eq "alice@umbrella.example"')}&excludedAttributes=emails,meta,name.familyName,id`)
  ).json().Resources[0]
  t.notOk('emails' in without)
  t.notOk('meta' in without)
  t.same(without.name, { givenName: 'Alice' })
  t.ok(without.id, 'id is always returned')
  const one = await app.inject({ method: 'GET', url: `${SCIM}/Users/${only.id}?attributes=title`, headers: scim })
  t.same(one.json(), { title: 'Researcher', id: only.id, schemas: [USER, ENTERPRISE] })
})
