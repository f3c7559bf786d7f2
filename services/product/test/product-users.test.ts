import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'people', {
  responder: { alerting: 'responder', insights: 'viewer' },
  bystander: null,
})
const [owner, responder, bystander, stranger] = ['owner', 'responder', 'bystander', 'stranger'].map(person)
type Who = { headers: { authorization: string } }
const call = (method: 'GET' | 'PATCH', url: string, who: Who, payload?: unknown) =>
  app.inject({ method, url, headers: who.headers, ...(payload === undefined ? {} : { payload: payload as object }) })
const notifications = '/api/v1/users/me/notifications'

t.test('the profile is the same as on the platform: read and changed here too', async (t) => {
  const me = (await call('GET', '/api/v1/users/me', responder!)).json()
  t.match(me, { userId: responder!.userId, email: responder!.email, isEmployee: false, displayName: null, timeZone: null })
  const changed = await call('PATCH', '/api/v1/users/me', responder!, { displayName: 'Ada Responder', timeZone: 'Europe/Berlin' })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { displayName: 'Ada Responder', timeZone: 'Europe/Berlin' })
  t.equal((await call('PATCH', '/api/v1/users/me', responder!, { timeZone: 'Mars/Olympus' })).statusCode, 400)
  t.equal((await call('PATCH', '/api/v1/users/me', responder!, { email: 'x@example.com' })).statusCode, 400)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/me' })).statusCode, 401)
})

t.test('notification preferences start from defaults in the user’s time zone', async (t) => {
  const defaults = (await call('GET', notifications, responder!)).json()
  t.same(defaults, {
    channels: {
      email: { enabled: true, address: null },
      sms: { enabled: false, phoneNumber: null },
      voice: { enabled: false, phoneNumber: null },
      push: { enabled: true },
    },
    priorities: {
      P1: ['sms', 'voice', 'push', 'email'],
      P2: ['sms', 'push', 'email'],
      P3: ['push', 'email'],
      P4: ['email'],
      P5: ['email'],
    },
    rules: null,
    whenResolved: true,
    quietHours: { enabled: false, start: '22:00', end: '07:00', timeZone: 'Europe/Berlin', bypassPriorities: ['P1'] },
    updatedAt: null,
  })
  t.equal((await call('GET', notifications, bystander!)).json().quietHours.timeZone, 'UTC', 'no time zone on the account')
})

t.test('a change touches only what it names; rules a schema cannot say are 400s that change nothing', async (t) => {
  const changed = await call('PATCH', notifications, responder!, {
    channels: { sms: { enabled: true, phoneNumber: '+4915112345678' } },
    priorities: { P3: ['email'] },
    quietHours: { enabled: true, start: '23:00' },
  })
  t.equal(changed.statusCode, 200)
  const saved = changed.json()
  t.match(saved, {
    channels: { sms: { enabled: true, phoneNumber: '+4915112345678' }, email: { enabled: true }, voice: { enabled: false } },
    quietHours: { enabled: true, start: '23:00', end: '07:00', timeZone: 'Europe/Berlin' },
  })
  t.same(saved.priorities.P3, ['email'])
  t.same(saved.priorities.P1, ['sms', 'voice', 'push', 'email'], 'untouched')
  t.ok(saved.updatedAt)
  t.same((await call('GET', notifications, responder!)).json(), saved)

  const refusals: Array<[string, unknown, string]> = [
    [
      'voice without a number',
      { channels: { voice: { enabled: true } } },
      'body/channels/voice/phoneNumber is required while voice is enabled',
    ],
    ['a number that is not E.164', { channels: { sms: { phoneNumber: '0151 123' } } }, ''],
    ['an unknown channel', { priorities: { P1: ['pager'] } }, ''],
    ['a channel twice', { priorities: { P1: ['sms', 'sms'] } }, ''],
    [
      'an unknown time zone',
      { quietHours: { timeZone: 'Mars/Olympus' } },
      'body/quietHours/timeZone must be an IANA time zone such as Europe/Berlin',
    ],
    ['quiet hours that end when they start', { quietHours: { start: '07:00' } }, 'body/quietHours/end must differ from start'],
    ['a clock of 24:00', { quietHours: { end: '24:00' } }, ''],
    ['an unknown field', { channels: { email: { enabled: true, cc: 'x@example.com' } } }, ''],
    ['nothing', {}, ''],
    ['an e-mail that is not one', { channels: { email: { address: 'not-an-address' } } }, ''],
  ]
  for (const [name, payload, message] of refusals) {
    const response = await call('PATCH', notifications, responder!, payload)
    t.equal(response.statusCode, 400, name)
    if (message) t.equal(response.json().message, message, name)
  }
  t.same((await call('GET', notifications, responder!)).json(), saved, 'nothing changed')
  t.equal((await call('GET', notifications, bystander!)).json().updatedAt, null, 'one user’s change is theirs alone')
})

t.test('members of an organization with their product roles, to members only', async (t) => {
  await db.insertInto('core.users').values({ email: 'invited@people.example' }).execute()
  const invited = await db.selectFrom('core.users').select('id').where('email', '=', 'invited@people.example').executeTakeFirstOrThrow()
  await db.insertInto('core.organizationMembers').values({ organizationId: orgId, userId: invited.id, role: 'member' }).execute()
  const listed = await call('GET', `/api/v1/organizations/${orgId}/users`, bystander!)
  t.equal(listed.statusCode, 200)
  const body = listed.json()
  t.same(body.meta, { page: 1, limit: 20, total: 4 })
  t.same(
    body.data.map((user: { email: string }) => user.email),
    ['bystander@people.example', 'invited@people.example', 'owner@people.example', 'responder@people.example'],
  )
  t.match(
    body.data.find((user: { email: string }) => user.email === 'responder@people.example'),
    {
      role: 'member',
      productRoles: { alerting: 'responder', insights: 'viewer' },
      pending: false,
      suspended: false,
      displayName: 'Ada Responder',
    },
  )
  t.match(
    body.data.find((user: { email: string }) => user.email === 'invited@people.example'),
    { pending: true, productRoles: {} },
  )
  t.match(
    body.data.find((user: { email: string }) => user.email === 'owner@people.example'),
    { role: 'owner' },
  )
  const paged = (await call('GET', `/api/v1/organizations/${orgId}/users?limit=1&page=2`, bystander!)).json()
  t.same(
    paged.data.map((user: { email: string }) => user.email),
    ['invited@people.example'],
  )
  t.equal((await call('GET', `/api/v1/organizations/${orgId}/users`, stranger!)).statusCode, 404, 'not a member')
  t.equal((await call('GET', `/api/v1/organizations/${otherOrgId}/users`, owner!)).statusCode, 404, 'another organization')
})
