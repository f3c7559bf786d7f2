import t from 'tap'
import { postgresPass } from '../postgres-pass.js'

const local = 'postgres://postgres@127.0.0.1:5432/postgres'

t.test('the PostgreSQL pass runs on TEST_DATABASE_URL first, then on the local server', async (t) => {
  t.same(postgresPass({ TEST_DATABASE_URL: 'postgres://ci@db/postgres' }, local), { run: 'postgres://ci@db/postgres' })
  t.same(postgresPass({}, local), { run: local })
})

t.test('without a server, CI fails the run and a workstation skips the pass', async (t) => {
  t.match(postgresPass({ CI: 'true' }, undefined), { fail: /required in CI/ })
  t.match(postgresPass({}, undefined), { skip: /skipped/ })
  t.match(postgresPass({ CI: 'false' }, undefined), { skip: /skipped/ })
})
