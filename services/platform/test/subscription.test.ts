import t from 'tap'
import { buildApp } from '@svc/platform'
import { startTestService } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

async function subscriptionOf(token: string) {
  const response = await app.inject({ method: 'GET', url: '/api/v1/users/me/subscription', headers: { authorization: `Bearer ${token}` } })
  t.equal(response.statusCode, 200)
  return response.json()
}
async function userIdOf(token: string): Promise<string> {
  return (await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } })).json().userId
}

t.test('a user with no subscription anywhere has status none', async (t) => {
  t.same(await subscriptionOf(service.token('free@example.com')), { status: 'none', subscriptions: [] })
})

t.test("the organizations' product subscriptions and legacy ones are listed", async (t) => {
  const token = service.token('paying@example.com')
  const userId = await userIdOf(token)
  const org = await db.insertInto('core.organizations').values({ name: 'Paying', slug: 'paying' }).returning('id').executeTakeFirstOrThrow()
  const elsewhere = await db
    .insertInto('core.organizations')
    .values({ name: 'Elsewhere', slug: 'elsewhere' })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db.insertInto('core.organizationMembers').values({ organizationId: org.id, userId, role: 'member' }).execute()
  const periodEnd = new Date('2027-01-01T00:00:00.000Z')
  await db
    .insertInto('core.orgProductSubscriptions')
    .values([
      { organizationId: org.id, product: 'alerting', plan: 'team', status: 'active', currentPeriodEnd: periodEnd },
      { organizationId: elsewhere.id, product: 'bundle', plan: 'business', status: 'active' },
    ])
    .execute()
  await db.insertInto('core.subscriptions').values({ userId, plan: 'pro', status: 'canceled' }).execute()

  t.same(
    await subscriptionOf(token),
    {
      status: 'active',
      subscriptions: [
        {
          source: 'organization',
          organizationId: org.id,
          product: 'alerting',
          plan: 'team',
          status: 'active',
          currentPeriodEnd: periodEnd.toISOString(),
        },
        { source: 'legacy', organizationId: null, product: 'bundle', plan: 'pro', status: 'canceled', currentPeriodEnd: null },
      ],
    },
    "another organization's subscription is not shown",
  )
})

t.test('only lapsed subscriptions mean inactive', async (t) => {
  const token = service.token('lapsed@example.com')
  const userId = await userIdOf(token)
  await db.insertInto('core.subscriptions').values({ userId, plan: 'pro', status: 'past_due' }).execute()
  t.equal((await subscriptionOf(token)).status, 'inactive')
})
