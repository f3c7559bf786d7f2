import t from 'tap'
import { startDnsServer, startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// A custom domain is served only once whoever claimed it proved control of its DNS (decision
// 0015, "Custom domains"): a TXT record, read with node:dns from a DNS server on loopback.
const dns = await startDnsServer(t)
const service = await startTestService(t, buildApp, { config: { dnsServers: [dns.address] } })
const { app } = service
const db = app.database.db
const victim = await alertingOrganization(service, 'victim', { manager: { statuspages: 'manager' } })
const attacker = await alertingOrganization(service, 'attacker', { manager: { statuspages: 'manager' } })
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const pagesOf = (orgId: string) => `/api/v1/statuspages/organizations/${orgId}/pages`
const byHost = (host: string) => app.inject({ method: 'GET', url: '/api/v2/status.json', headers: { host } })
const DOMAIN = 'status.victim.example'
const RECORD = `_statuspage-verification.${DOMAIN}`

const theirs = (
  await call(attacker.person('manager'), 'POST', pagesOf(attacker.orgId), {
    name: 'Fake',
    slug: 'fake',
    published: true,
    customDomain: DOMAIN,
  })
).json()
const ours = (
  await call(victim.person('manager'), 'POST', pagesOf(victim.orgId), {
    name: 'Victim',
    slug: 'victim',
    published: true,
    customDomain: DOMAIN,
  })
).json()

t.test('a claim without proof is not served and blocks nobody', async (t) => {
  t.equal(theirs.customDomain, DOMAIN)
  t.equal(ours.customDomain, DOMAIN, 'the real owner can claim it too: an unverified claim is no 409')
  t.match(theirs.customDomainVerification, { status: 'pending', recordType: 'TXT', recordName: RECORD, verifiedAt: null })
  t.not(theirs.customDomainVerification.recordValue, ours.customDomainVerification.recordValue, 'each claim has its own token')
  t.equal((await byHost(DOMAIN)).statusCode, 404, 'nothing is served at the domain')

  const unproven = await call(attacker.person('manager'), 'POST', `${pagesOf(attacker.orgId)}/${theirs.id}/custom-domain/verify`)
  t.equal(unproven.statusCode, 409)
  t.match(unproven.json().message, `no TXT record at ${RECORD}`)
})

t.test('the owner publishes the token in DNS and verifies: the page is served there, and the domain is theirs', async (t) => {
  // Only the domain's owner can write its DNS: they publish their claim's token.
  dns.txt.set(RECORD, ['v=something-else', ours.customDomainVerification.recordValue])
  const wrongToken = await call(attacker.person('manager'), 'POST', `${pagesOf(attacker.orgId)}/${theirs.id}/custom-domain/verify`)
  t.equal(wrongToken.statusCode, 409, 'another claim’s token proves nothing')
  t.match(wrongToken.json().message, /do not hold incident-platform-verification=/)

  const verified = await call(victim.person('manager'), 'POST', `${pagesOf(victim.orgId)}/${ours.id}/custom-domain/verify`)
  t.equal(verified.statusCode, 200, verified.body)
  t.match(verified.json(), { publicUrl: `https://${DOMAIN}/`, customDomainVerification: { status: 'verified', expiresAt: null } })
  const served = await byHost(DOMAIN)
  t.equal(served.statusCode, 200)
  t.equal(served.json().page.name, 'Victim')
  t.ok(dns.asked.includes(RECORD), 'the record was read through DNS')

  const late = await call(attacker.person('manager'), 'PATCH', `${pagesOf(attacker.orgId)}/${theirs.id}`, { customDomain: DOMAIN })
  t.equal(late.statusCode, 409, 'once verified elsewhere, the domain cannot be claimed again')
  const another = await call(attacker.person('manager'), 'POST', pagesOf(attacker.orgId), {
    name: 'Again',
    slug: 'again',
    customDomain: DOMAIN,
  })
  t.equal(another.statusCode, 409, 'a verified domain is taken')
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', ours.id).execute()
  t.ok(audit.some((entry) => entry.action === 'status_page.domain_verified'))
})

t.test('a verified domain is checked again; a record missing past the grace stops it being served', async (t) => {
  const due = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000)
  const runMaintenance = async () => {
    await app.jobs.send('statuspages.domains', {})
    // The job is done when the page's check time moved.
    for (let tries = 0; tries < 100; tries++) {
      const row = await db
        .selectFrom('divinux.statusPages')
        .select('customDomainCheckedAt')
        .where('id', '=', ours.id)
        .executeTakeFirstOrThrow()
      if (row.customDomainCheckedAt && row.customDomainCheckedAt > due(1)) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error('the domain job did not run')
  }
  dns.txt.delete(RECORD)
  await db
    .updateTable('divinux.statusPages')
    .set({ customDomainCheckedAt: due(25) })
    .where('id', '=', ours.id)
    .execute()
  await runMaintenance()
  const failing = (await call(victim.person('manager'), 'GET', `${pagesOf(victim.orgId)}/${ours.id}`)).json()
  t.match(failing.customDomainVerification, { status: 'failing' })
  t.equal((await byHost(DOMAIN)).statusCode, 200, 'one missing check is not enough: still served')

  // Three days later it is still missing.
  await db
    .updateTable('divinux.statusPages')
    .set({ customDomainCheckedAt: due(25), customDomainFailingSince: due(73) })
    .where('id', '=', ours.id)
    .execute()
  await runMaintenance()
  const revoked = (await call(victim.person('manager'), 'GET', `${pagesOf(victim.orgId)}/${ours.id}`)).json()
  t.match(revoked.customDomainVerification, { status: 'pending', verifiedAt: null })
  t.equal((await byHost(DOMAIN)).statusCode, 404, 'no longer served there')
})

t.test('an unverified claim ends after a week', async (t) => {
  await db
    .updateTable('divinux.statusPages')
    .set({ customDomainClaimedAt: new Date(Date.now() - 8 * 86_400_000) })
    .where('id', '=', theirs.id)
    .execute()
  await app.jobs.send('statuspages.domains', {})
  for (let tries = 0; tries < 100; tries++) {
    const row = await db.selectFrom('divinux.statusPages').select('customDomain').where('id', '=', theirs.id).executeTakeFirstOrThrow()
    if (row.customDomain === null) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const ended = (await call(attacker.person('manager'), 'GET', `${pagesOf(attacker.orgId)}/${theirs.id}`)).json()
  t.match(ended, { customDomain: null, customDomainVerification: null })
})
