import Fastify from 'fastify'
import t from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { registerErrorHandling } from '@svc/http'
import { catcherProvider } from '@svc/notifier'
import { DEV_OUTBOX_PATH, devOutboxRoutes } from '@svc/runtime'
import { createTestDatabase } from '@svc/testkit'

const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
t.teardown(() => database.close())
await migrateToLatest(database.db)
await database.db
  .insertInto('core.outbox')
  .values([
    {
      channel: 'email',
      kind: 'member.invitation',
      recipient: 'ada@example.com',
      subject: 'Join <Acme>',
      bodyText: 'Accept: https://x/inv_1',
      status: 'captured',
    },
    { channel: 'sms', kind: 'alert.page', recipient: '+15550100', bodyText: 'API down', status: 'held', lastError: 'no SMS provider' },
  ])
  .execute()
const app = Fastify()
registerErrorHandling(app)
await app.register(devOutboxRoutes, { db: database.db })
t.teardown(() => app.close())

t.test('the development outbox lists messages as JSON and as a page, to this machine only', async (t) => {
  const all = await app.inject({ method: 'GET', url: `${DEV_OUTBOX_PATH}.json` })
  t.equal(all.statusCode, 200)
  t.same(
    all
      .json()
      .data.map((message: { recipient: string; status: string }) => [message.recipient, message.status])
      .sort(),
    [
      ['+15550100', 'held'],
      ['ada@example.com', 'captured'],
    ],
  )
  const captured = await app.inject({ method: 'GET', url: `${DEV_OUTBOX_PATH}.json?status=captured&limit=5` })
  t.match(captured.json().data, [{ recipient: 'ada@example.com', subject: 'Join <Acme>', text: 'Accept: https://x/inv_1', note: null }])
  t.equal((await app.inject({ method: 'GET', url: `${DEV_OUTBOX_PATH}.json?status=lost` })).statusCode, 400)

  const page = await app.inject({ method: 'GET', url: DEV_OUTBOX_PATH })
  t.equal(page.headers['cache-control'], 'no-store')
  t.match(page.body, /<h2>email to ada@example\.com: Join &lt;Acme&gt;<\/h2>/, 'what it shows is escaped')
  t.match(page.body, /held · alert\.page · no SMS provider/)

  // Messages carry codes and links: another machine is told nothing is here.
  for (const url of [DEV_OUTBOX_PATH, `${DEV_OUTBOX_PATH}.json`]) {
    const remote = await app.inject({ method: 'GET', url, remoteAddress: '192.0.2.7' })
    t.equal(remote.statusCode, 404, url)
    t.notMatch(remote.body, /ada@example/)
  }
})

t.test('a page elsewhere cannot read it through a name that resolves here (DNS rebinding)', async (t) => {
  for (const host of ['rebind.attacker.example', 'rebind.attacker.example:3004', '127.0.0.1.nip.io', 'attacker.example@localhost']) {
    for (const url of [DEV_OUTBOX_PATH, `${DEV_OUTBOX_PATH}.json`]) {
      const rebound = await app.inject({ method: 'GET', url, headers: { host } })
      t.equal(rebound.statusCode, 404, `${url} with Host ${JSON.stringify(host)}`)
      t.notMatch(rebound.body, /ada@example/)
    }
  }
  for (const host of ['localhost:3004', '127.0.0.1:3004', '[::1]:3004', 'platform.localhost']) {
    t.equal((await app.inject({ method: 'GET', url: `${DEV_OUTBOX_PATH}.json`, headers: { host } })).statusCode, 200, host)
  }
})

t.test('the catcher’s console line shows control characters as escapes, never runs them', async (t) => {
  const lines: string[] = []
  const catcher = catcherProvider('email', (line) => lines.push(line))
  await catcher.send({
    id: 'm1',
    to: 'ada@example.com\r\u001b[2K',
    subject: 'Disk full\u001b[31m\rcaptured e-mail to boss \u202eevil\u0007',
    text: 'body',
  })
  t.equal(lines.length, 1)
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  t.notMatch(lines[0], /[\u0000-\u001f\u007f-\u009f\u202e]/u, 'no control character reaches the terminal')
  t.match(
    lines[0],
    'captured e-mail to ada@example.com\\u000d\\u001b[2K “Disk full\\u001b[31m\\u000dcaptured e-mail to boss \\u202eevil\\u0007” (m1)',
  )
})
