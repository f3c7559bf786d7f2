import t from 'tap'
import { Migrator, sql } from 'kysely'
import { openDatabase } from '@svc/db'
import { migrations } from '@svc/migrations'
import { createTestDatabase } from '@svc/testkit'

// 0055 (decision 0023) on a database with memberships in it: every one of them has joined (as
// of when it was made), none is lost, and new memberships join at once unless an invitation says
// otherwise.
const databaseUrl = await createTestDatabase(t, { empty: true })
const database = await openDatabase({ databaseUrl })
t.teardown(() => database.close())
const raw = database.db.withoutPlugins()
const migrator = new Migrator({ db: raw, provider: { getMigrations: async () => migrations } })
const before = await migrator.migrateTo('0054_analysis_event_order')
if (before.error) throw before.error

const one = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(raw)).rows[0] as T
const { id: orgId } = await one<{ id: string }>(sql`insert into core.organizations (name, slug) values ('Rows', 'rows') returning id`)
const { id: ownerId } = await one<{ id: string }>(
  sql`insert into core.users (email, idp_subject) values ('owner@rows.example', 'o') returning id`,
)
const { id: pendingId } = await one<{ id: string }>(sql`insert into core.users (email) values ('pending@rows.example') returning id`)
await sql`
  insert into core.organization_members (organization_id, user_id, role, created_at)
  values (${orgId}, ${ownerId}, 'owner', now() - interval '30 days'), (${orgId}, ${pendingId}, 'member', now() - interval '2 days')`.execute(
  raw,
)
const members = () =>
  sql<{ user_id: string; role: string; joined: boolean }>`
    select user_id, role, joined_at = created_at as joined from core.organization_members order by created_at`.execute(raw)
const after = await migrator.migrateTo('0055_invitations')
if (after.error) throw after.error

t.test('every membership that existed has joined, as of when it was made', async (t) => {
  t.same((await members()).rows, [
    { user_id: ownerId, role: 'owner', joined: true },
    { user_id: pendingId, role: 'member', joined: true },
  ])
})

t.test('a membership made without an invitation joins at once; the invitations table starts empty', async (t) => {
  const { id: userId } = await one<{ id: string }>(sql`insert into core.users (email) values ('new@rows.example') returning id`)
  const row = await one<{ joined_at: Date | null }>(sql`
    insert into core.organization_members (organization_id, user_id, role) values (${orgId}, ${userId}, 'member') returning joined_at`)
  t.ok(row.joined_at instanceof Date)
  t.same(await one(sql`select count(*)::int as n from core.invitations`), { n: 0 })
})

t.test('the migration goes down again, keeping the memberships', async (t) => {
  const down = await migrator.migrateTo('0054_analysis_event_order')
  if (down.error) throw down.error
  t.same(await one(sql`select count(*)::int as n from core.organization_members`), { n: 3 })
  t.same(await one(sql`select to_regclass('core.invitations') is null as gone`), { gone: true })
})
