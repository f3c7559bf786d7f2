// `pnpm bench:scim`: GET /api/v1/scim/v2/Users with the filters identity providers send, on an
// organization of 100,000 SCIM users in PostgreSQL (TEST_DATABASE_URL, or the server on
// 127.0.0.1:5432), through the real route with a real SCIM token. Another organization holds
// 100,000 more, so every query has to filter by organization. Creates and drops its own database.
import { sql } from 'kysely'
import { generateScimToken } from '@svc/auth'
import { timeRoute, withBenchService } from './database.js'

const USERS = Number(process.env.BENCH_SCIM_USERS ?? 100_000)
const BASE = '/api/v1/scim/v2/Users'

await withBenchService('bench_scim', async ({ app, db }) => {
  const organizations = await db
    .insertInto('core.organizations')
    .values([
      { name: 'Target', slug: 'bench-target' },
      { name: 'Other', slug: 'bench-other' },
    ])
    .returning('id')
    .execute()
  // A SCIM token acts while its creator is an active admin or owner of its organization.
  const creator = await db.insertInto('core.users').values({ email: 'owner@bench.example' }).returning('id').executeTakeFirstOrThrow()
  await db
    .insertInto('core.organizationMembers')
    .values({ organizationId: organizations[0]!.id, userId: creator.id, role: 'owner' })
    .execute()
  const { token, prefix, hash } = generateScimToken()
  await db
    .insertInto('core.scimTokens')
    .values({ organizationId: organizations[0]!.id, name: 'bench', tokenPrefix: prefix, tokenHash: hash, createdBy: creator.id })
    .execute()
  const headers = { authorization: `Bearer ${token}` }

  console.log(`seeding ${USERS.toLocaleString()} SCIM users in the organization under test and as many in another...`)
  const started = Date.now()
  for (const [index, organization] of organizations.entries()) {
    const domain = index === 0 ? 'target.example' : 'other.example'
    await sql`insert into core.users (email) select 'user-' || g || '@' || ${domain} from generate_series(1, ${USERS}) as g`.execute(db)
    await sql`
      insert into core.organization_members (organization_id, user_id, role, user_name, external_id, scim_attributes, created_at)
      select ${organization.id}::uuid, u.id, 'member', u.email, 'ext-' || split_part(split_part(u.email, '@', 1), '-', 2),
        jsonb_build_object(
          'name', jsonb_build_object('givenName', 'Given' || split_part(split_part(u.email, '@', 1), '-', 2), 'familyName', 'Family'),
          'emails', jsonb_build_array(jsonb_build_object('value', u.email, 'type', 'work', 'primary', true)),
          'title', (array['Engineer', 'Manager', 'Analyst', 'Director'])[1 + (split_part(split_part(u.email, '@', 1), '-', 2)::int % 4)]),
        now() - make_interval(secs => split_part(split_part(u.email, '@', 1), '-', 2)::int)
      from core.users u where u.email like ${`%@${domain}`}`.execute(db)
  }
  await sql`vacuum analyze`.execute(db)
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const probe = Math.floor(USERS * 0.54321)
  const queries: Record<string, string> = {
    'userName eq (Okta, Entra: find before create)': `userName eq "USER-${probe}@target.example"`,
    'externalId eq': `externalId eq "ext-${probe}"`,
    'userName sw': `userName sw "user-${probe}"`,
    'userName eq or userName eq': `userName eq "user-1@target.example" or userName eq "user-${probe}@target.example"`,
    'emails[type eq "work"].value eq': `emails[type eq "work"].value eq "user-${probe}@target.example"`,
    'title eq and meta.created gt (scans)': `title eq "Manager" and meta.created gt "2000-01-01T00:00:00Z"`,
  }
  const paths: Record<string, string> = Object.fromEntries(
    Object.entries(queries).map(([label, filter]) => [label, `${BASE}?filter=${encodeURIComponent(filter)}&count=100`]),
  )
  paths['no filter, first page of 100'] = `${BASE}?count=100`
  paths['no filter, startIndex 50,001'] = `${BASE}?startIndex=50001&count=100`

  console.log(`\n| query | totalResults | median (ms) | p95 (ms) |\n|---|---:|---:|---:|`)
  for (const [label, path] of Object.entries(paths)) {
    const { median, p95, body } = await timeRoute(app, path, headers)
    console.log(`| ${label} | ${(body as { totalResults: number }).totalResults.toLocaleString()} | ${median} | ${p95} |`)
  }
})
