import t from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { createTestDatabase } from '@svc/testkit'
import { chatBehind, claimIncidentsBehind, markChatSynced } from '../src/incidents/queries.js'

// Slack's incident sync takes an incident whose chat is behind, shows it, and marks it shown
// (decision 0020, "Slack follows the incident"). A channel asked for while it is being shown
// (a workflow's create_incident_channel: `chatBehind`) may come after the sync read the requests:
// marking it shown then must leave it behind, or the channel waits for the incident's next change.
const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
await migrateToLatest(database.db)
t.teardown(() => database.close())
const db = database.db
let number = 0

/** An incident of an organization of its own: the sync takes one incident per organization a round. */
async function incident() {
  number += 1
  const organization = await db
    .insertInto('core.organizations')
    .values({ name: `Chat ${number}`, slug: `chat-${number}` })
    .returning('id')
    .executeTakeFirstOrThrow()
  const row = await db
    .insertInto('divinux.incidents')
    .values({ organizationId: organization.id, number, openedBy: 'person', severity: 'SEV2', title: `Incident ${number}` })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, organizationId: organization.id }
}

/** The sync's claim of the incident, if it is behind (with a lease that ends at once, so the next claim may take it again). */
const claim = async (id: string, leaseSeconds = 0) => (await claimIncidentsBehind(db, 100, leaseSeconds)).find((row) => row.id === id)

t.test('a channel asked for while a new incident is being shown keeps it behind', async (t) => {
  const { id, organizationId } = await incident()
  const claimed = await claim(id, 60)
  t.ok(claimed, 'a new incident is behind')
  await chatBehind(db, organizationId, id)
  await markChatSynced(db, id, claimed!.seenAt)
  t.ok(await claim(id), 'still behind once the sync that began before the request ends')
})

t.test('a channel asked for while a shown incident is shown again keeps it behind too', async (t) => {
  const { id, organizationId } = await incident()
  await markChatSynced(db, id, (await claim(id, 60))!.seenAt)
  t.notOk(await claim(id), 'shown as it is')
  await db
    .updateTable('divinux.incidents')
    .set({ title: 'Renamed', updatedAt: new Date(Date.now() + 1000) })
    .where('id', '=', id)
    .execute()
  const changed = await claim(id, 60)
  t.ok(changed, 'a change puts it behind')
  await chatBehind(db, organizationId, id)
  await markChatSynced(db, id, changed!.seenAt)
  const again = await claim(id, 60)
  t.ok(again, 'the request during the sync keeps it behind')
  await markChatSynced(db, id, again!.seenAt)
  t.notOk(await claim(id), 'and the next sync shows it')
})
