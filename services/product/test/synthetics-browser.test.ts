import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { chromiumPresent, SHOP_PASSWORD, shopScript, startShop, startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Browser checks through the API and the scheduler (issue 59): a Playwright script signs in to a
// small shop on loopback and places an order, in this service's Chromium, on schedule. When the
// shop's button breaks the check fails, opens its alert, and keeps a screenshot served by a
// signed link; mended, it recovers. Saving one is held to its kind's bounds and to the
// organization's monthly browser runs. The runner itself is tested in packages/check-runner; a
// relay runs one in synthetics-relay.test.ts.
if (await chromiumPresent(t, 'browser checks through the API')) {
  const service = await startTestService(t, buildApp, {
    config: {
      outbound: { allowPrivateTargets: true },
      synthetics: {
        region: 'local',
        retentionDays: 30,
        concurrency: 10,
        browserRunsPerMonth: 50_000,
        secretsKey: randomBytes(32).toString('base64'),
      },
    },
  })
  const { app } = service
  const db = app.database.db
  const { orgId, person } = await alertingOrganization(service, 'browser', {
    manager: { synthetics: 'manager', alerting: 'manager' },
    viewer: { synthetics: 'viewer' },
  })
  const [manager, viewer] = ['manager', 'viewer'].map(person)
  type Who = { headers: { authorization: string } }
  const base = `/api/v1/synthetics/organizations/${orgId}`
  const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
    app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

  const shop = await startShop(t.teardown)
  const shopUrl = shop.url
  const script = shopScript(shopUrl, 'secrets.SHOP_PASSWORD')
  const definition = (fields: object = {}) => ({
    name: 'Checkout journey',
    kind: 'browser',
    frequencySeconds: 600,
    timeoutMs: 20_000,
    request: { script },
    ...fields,
  })
  const dueNow = (checkId: string) => sql`update divinux.synthetic_checks set next_due_at = now() where id = ${checkId}`.execute(db)
  const results = async (checkId: string) => (await call(viewer!, 'GET', `${base}/checks/${checkId}/results`)).json()
  const stateOf = async (checkId: string) => (await call(viewer!, 'GET', `${base}/checks/${checkId}`)).json().state

  t.test('a browser check is saved only within its kind’s bounds', async (t) => {
    const unknownSecret = await call(manager!, 'POST', `${base}/checks`, definition())
    t.match(unknownSecret.json(), { statusCode: 400, message: /request\/script refers to the secret SHOP_PASSWORD, which does not exist/ })
    t.equal((await call(manager!, 'PUT', `${base}/secrets/SHOP_PASSWORD`, { value: SHOP_PASSWORD })).statusCode, 201)
    const refusals: Array<[object, number, RegExp]> = [
      [{ request: { script: 'await page.goto(' } }, 400, /request\/script does not compile/],
      [{ request: { script: 'x', extra: true } }, 400, /request/],
      [{ frequencySeconds: 30, timeoutMs: 10_000 }, 400, /frequencySeconds must be at least 60 for a browser check/],
      [{ retries: 3 }, 400, /retries must be at most 2 for a browser check/],
      [{ timeoutMs: 60_001 }, 400, /timeoutMs/],
    ]
    for (const [fields, status, message] of refusals) {
      const refused = await call(manager!, 'POST', `${base}/checks`, definition(fields))
      t.equal(refused.statusCode, status, JSON.stringify(fields))
      t.match(refused.json().message, message)
    }
    const http = await call(manager!, 'POST', `${base}/checks`, {
      name: 'Slow',
      kind: 'http',
      frequencySeconds: 60,
      timeoutMs: 45_000,
      request: { url: shopUrl },
    })
    t.match(http.json().message, /timeoutMs must be at most 30000 for a http check/, 'the longer timeout is a browser check’s only')
    t.equal((await call(viewer!, 'GET', `${base}/checks`)).json().meta.total, 0, 'nothing refused was saved')
  })

  t.test('the organization’s browser runs a month are limited: past it, 402 and nothing changes', async (t) => {
    // The checks counted here are a relay region's whose relay said it has Chromium and never
    // leases: they are scheduled, and no Chromium is started for them.
    const relay = (await call(manager!, 'POST', `${base}/relays`, { name: 'Counted', regions: ['counted'] })).json()
    const said = await app.inject({
      method: 'POST',
      url: '/api/v1/synthetics/relay/heartbeat',
      headers: { authorization: `Bearer ${relay.key}` },
      payload: { browser: true },
    })
    t.equal(said.statusCode, 200)
    const counted = (fields: object) => definition({ regions: ['counted'], ...fields })
    // 50,000 runs in 30 days: a check every minute in one region is 43,200.
    const everyMinute = await call(
      manager!,
      'POST',
      `${base}/checks`,
      counted({ name: 'Every minute', frequencySeconds: 60, paused: true }),
    )
    t.equal(everyMinute.statusCode, 201, 'paused, it counts nothing')
    const check = everyMinute.json()
    t.equal((await call(manager!, 'POST', `${base}/checks/${check.id}/resume`)).statusCode, 200, 'resumed: 43,200 of 50,000')
    const another = await call(manager!, 'POST', `${base}/checks`, counted({ name: 'Another', frequencySeconds: 120 }))
    t.equal(another.statusCode, 402)
    t.match(another.json(), {
      code: 'BUDGET_EXCEEDED',
      message: /would run 64800 times in 30 days \(this one 21600\); the limit is 50000/,
    })
    t.equal((await call(manager!, 'POST', `${base}/checks/${check.id}/pause`)).statusCode, 200)
    const second = await call(manager!, 'POST', `${base}/checks`, counted({ name: 'Another', frequencySeconds: 120 }))
    t.equal(second.statusCode, 201, 'with the first paused, the second fits')
    t.equal((await call(manager!, 'POST', `${base}/checks/${check.id}/resume`)).statusCode, 402, 'and the first cannot resume over it')
    t.equal((await call(viewer!, 'GET', `${base}/checks/${check.id}`)).json().paused, true, 'it stays paused')
    const slower = await call(manager!, 'PATCH', `${base}/checks/${check.id}`, { frequencySeconds: 3600, paused: false })
    t.equal(slower.statusCode, 200, 'hourly, it fits beside the other: a change counts the check once')
    for (const id of [check.id, second.json().id])
      t.equal((await app.inject({ method: 'DELETE', url: `${base}/checks/${id}`, headers: manager!.headers })).statusCode, 204)
  })

  t.test(
    'on schedule the check signs in and orders; the button breaks: it fails with an alert and a screenshot; mended, it recovers',
    async (t) => {
      const created = await call(manager!, 'POST', `${base}/checks`, definition())
      t.equal(created.statusCode, 201, created.body)
      const check = created.json()
      t.equal(check.timeoutMs, 20_000)

      const first = await until(
        'the first run',
        async () => ((await results(check.id)).meta.total === 1 ? results(check.id) : undefined),
        30_000,
      )
      const [run] = first.data
      t.equal(run.status, 'passing', run.error ?? 'passing')
      t.same(
        run.attempts[0].details.steps.map((step: { name: string; status: string }) => [step.name, step.status]),
        [
          ['sign in', 'passing'],
          ['place an order', 'passing'],
        ],
        'each step of the script is kept',
      )
      t.equal(run.attempts[0].screenshotUrl, undefined, 'no screenshot of a success unless asked')
      t.equal(run.attempts[0].details.url, `${shopUrl}/account`, 'signed in with the secret, which the check shows by name only')
      t.match(check.request.script, /secrets\.SHOP_PASSWORD/)
      await until('the check to pass', async () => (await stateOf(check.id)) === 'passing')

      shop.broken = true
      await dueNow(check.id)
      await until('the check to fail', async () => (await stateOf(check.id)) === 'failing', 30_000)
      const failed = (await results(check.id)).data[0]
      t.match(failed.error, /toHaveText/, 'the failure names the expectation')
      t.match(failed.attempts[0].details, {
        steps: [
          { name: 'sign in', status: 'passing' },
          { name: 'place an order', status: 'failing' },
        ],
      })
      t.ok(
        failed.attempts[0].details.failedRequests.some(
          (request: { url: string; status: number }) => request.url === `${shopUrl}/api/order`,
        ),
        'the failed request is kept',
      )
      const alert = await until('the alert to open', () =>
        db.selectFrom('divinux.alerts').selectAll().where('fingerprint', '=', `check:${check.id}`).executeTakeFirst(),
      )
      t.match(alert, { source: 'synthetics', status: 'open', description: new RegExp(`${shopUrl}/ \\(browser\\) is failing in local`) })

      const link = new URL(failed.attempts[0].screenshotUrl)
      t.match(link.pathname, /^\/api\/v1\/synthetics\/screenshots\/[0-9a-f-]{36}$/)
      const image = await app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })
      t.equal(image.statusCode, 200, 'the signed link needs no credentials')
      t.equal(image.headers['content-type'], 'image/png')
      t.equal(image.rawPayload.subarray(1, 4).toString(), 'PNG')
      const forged = new URLSearchParams(link.search)
      forged.set('signature', `${forged.get('signature')!.slice(0, -2)}AA`)
      t.equal((await app.inject({ method: 'GET', url: `${link.pathname}?${forged}` })).statusCode, 403, 'a forged signature')
      const later = new URLSearchParams(link.search)
      later.set('expires', String(Number(later.get('expires')) + 3600))
      t.equal((await app.inject({ method: 'GET', url: `${link.pathname}?${later}` })).statusCode, 403, 'a longer life than was signed')
      const expired = new URLSearchParams({ expires: '1', signature: later.get('signature')! })
      t.equal((await app.inject({ method: 'GET', url: `${link.pathname}?${expired}` })).statusCode, 403, 'an expired link')

      const tested = await call(manager!, 'POST', `${base}/checks/${check.id}/run`)
      t.equal(tested.json().status, 'failing')
      t.equal(
        Buffer.from(tested.json().attempts[0].screenshot, 'base64').subarray(1, 4).toString(),
        'PNG',
        'a test run answers its screenshot itself: it is not stored',
      )

      shop.broken = false
      await dueNow(check.id)
      await until('the check to pass again', async () => (await stateOf(check.id)) === 'passing', 30_000)
      await until(
        'the alert to be resolved',
        async () =>
          (await db.selectFrom('divinux.alerts').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status ===
          'resolved',
      )

      // Past retention a run goes, and its screenshot with it: the link then opens nothing.
      await sql`delete from divinux.synthetic_runs where check_id = ${check.id}`.execute(db)
      t.equal((await app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })).statusCode, 403, 'gone with its run')
    },
  )
}
