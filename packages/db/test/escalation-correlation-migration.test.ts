import t from 'tap'
import { Migrator, sql } from 'kysely'
import { openDatabase } from '@svc/db'
import { migrations } from '@svc/migrations'
import { createTestDatabase } from '@svc/testkit'

// 0092 (issue 57) on escalations pending when it runs: one whose alert still waits for the event
// dispatcher waits for its correlation; one whose alert was correlated, or went past correlation,
// may start; a started one waits for nothing.
const databaseUrl = await createTestDatabase(t, { empty: true })
const database = await openDatabase({ databaseUrl })
t.teardown(() => database.close())
const raw = database.db.withoutPlugins()
const migrator = new Migrator({ db: raw, provider: { getMigrations: async () => migrations } })
const before = await migrator.migrateTo('0091_urgent_escalations_first')
if (before.error) throw before.error

const rows = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(raw)).rows
const [{ id: orgId }] = (await rows<{ id: string }>(
  sql`insert into core.organizations (name, slug) values ('Storm', 'storm') returning id`,
)) as [{ id: string }]
/** An alert with its `created` event (dispatched or not) and its escalation in `state`. */
async function alert(fingerprint: string, dispatched: boolean, state: string) {
  const [{ id }] = (await rows<{ id: string }>(sql`
    insert into divinux.alerts (organization_id, source, title, priority, fingerprint)
    values (${orgId}, 'generic', ${fingerprint}, 'P3', ${fingerprint}) returning id`)) as [{ id: string }]
  await sql`insert into divinux.alert_events (organization_id, alert_id, type, data, dispatched_at)
    values (${orgId}, ${id}, 'created', '{}', ${dispatched ? sql`now()` : null})`.execute(raw)
  await sql`insert into divinux.alert_escalations (alert_id, organization_id, state) values (${id}, ${orgId}, ${state})`.execute(raw)
  return id
}
const waiting = await alert('waiting', false, 'pending')
const correlated = await alert('correlated', true, 'pending')
const started = await alert('started', false, 'active')
const after = await migrator.migrateTo('0092_escalations_wait_for_correlation')
if (after.error) throw after.error

t.test('a pending escalation whose alert is not correlated yet waits for it; the others wait for nothing', async (t) => {
  const marks = await rows<{ alert_id: string; awaits_correlation: boolean }>(
    sql`select alert_id, awaits_correlation from divinux.alert_escalations`,
  )
  t.same(
    new Map(marks.map((row) => [row.alert_id, row.awaits_correlation])),
    new Map([
      [waiting, true],
      [correlated, false],
      [started, false],
    ]),
  )
})

t.test('an escalation written by a replica of before, which does not say, waits for nothing (a rolling upgrade)', async (t) => {
  const [{ id }] = (await rows<{ id: string }>(sql`
    insert into divinux.alerts (organization_id, source, title, priority, fingerprint)
    values (${orgId}, 'generic', 'new', 'P3', 'new') returning id`)) as [{ id: string }]
  await sql`insert into divinux.alert_escalations (alert_id, organization_id, state) values (${id}, ${orgId}, 'pending')`.execute(raw)
  const [row] = await rows<{ awaits_correlation: boolean }>(
    sql`select awaits_correlation from divinux.alert_escalations where alert_id = ${id}`,
  )
  t.equal(row!.awaits_correlation, false)
})
