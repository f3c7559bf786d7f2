import t from 'tap'
import { bannerStatusOf, maintenanceMayMove, overallStatus, worstStatus } from '../src/model.js'
import { acceptsGzip } from '../src/public/routes.js'
import { PARTIAL_OUTAGE_WEIGHT, uptimeOf } from '../src/public/uptime.js'

t.test('the page indicator is the worst of open impacts and component statuses, in Statuspage’s words', async (t) => {
  t.same(overallStatus(['operational'], []), { indicator: 'none', state: 'operational', description: 'All Systems Operational' })
  t.same(overallStatus(['operational', 'under_maintenance'], []), {
    indicator: 'none',
    state: 'maintenance',
    description: 'Service Under Maintenance',
  })
  t.same(overallStatus(['degraded_performance'], []), { indicator: 'minor', state: 'minor', description: 'Minor Service Outage' })
  t.same(overallStatus(['partial_outage', 'degraded_performance'], ['minor']), {
    indicator: 'major',
    state: 'major',
    description: 'Partial System Outage',
  })
  t.same(overallStatus(['operational'], ['critical', 'minor']), {
    indicator: 'critical',
    state: 'critical',
    description: 'Major System Outage',
  })
  t.same(overallStatus(['major_outage'], ['none']), { indicator: 'critical', state: 'critical', description: 'Major System Outage' })
  t.equal(worstStatus([]), 'operational')
  t.equal(worstStatus(['under_maintenance', 'degraded_performance']), 'degraded_performance', 'an outage outranks maintenance')
})

t.test('maintenance only moves forward', async (t) => {
  t.ok(maintenanceMayMove('scheduled', 'in_progress'))
  t.ok(maintenanceMayMove('in_progress', 'verifying'))
  t.ok(maintenanceMayMove('verifying', 'completed'))
  t.ok(maintenanceMayMove('scheduled', 'cancelled'))
  t.ok(maintenanceMayMove('in_progress', 'in_progress'), 'an update without a move')
  t.notOk(maintenanceMayMove('in_progress', 'scheduled'))
  t.notOk(maintenanceMayMove('verifying', 'cancelled'))
  t.notOk(maintenanceMayMove('completed', 'in_progress'))
  t.notOk(maintenanceMayMove('cancelled', 'scheduled'))
})

t.test('Accept-Encoding: gzip unless refused with q=0', async (t) => {
  t.ok(acceptsGzip('gzip, deflate, br'))
  t.ok(acceptsGzip('br;q=1.0, gzip;q=0.8'))
  t.ok(acceptsGzip('*'))
  t.notOk(acceptsGzip(undefined))
  t.notOk(acceptsGzip('br'))
  t.notOk(acceptsGzip('gzip;q=0'))
})

const at = (iso: string) => new Date(iso)

t.test('uptime: a major outage counts fully, a partial one by its weight, maintenance not at all', async (t) => {
  const now = at('2026-11-24T12:00:00Z')
  const uptime = uptimeOf(
    [
      { status: 'operational', changedAt: at('2026-01-01T00:00:00Z') },
      // 2026-11-22: an hour of major outage.
      { status: 'major_outage', changedAt: at('2026-11-22T10:00:00Z') },
      { status: 'operational', changedAt: at('2026-11-22T11:00:00Z') },
      // 2026-11-23: two hours of partial outage, then four hours of maintenance.
      { status: 'partial_outage', changedAt: at('2026-11-23T00:00:00Z') },
      { status: 'under_maintenance', changedAt: at('2026-11-23T02:00:00Z') },
      { status: 'degraded_performance', changedAt: at('2026-11-23T06:00:00Z') },
      { status: 'operational', changedAt: at('2026-11-23T07:00:00Z') },
    ],
    now,
  )
  t.equal(uptime.days.length, 90)
  t.equal(uptime.days.at(-1)?.date, '2026-11-24')
  const [dayBefore, yesterday, today] = uptime.days.slice(-3)
  t.match(dayBefore, { date: '2026-11-22', uptime: 95.833, majorOutageSeconds: 3600 })
  // 20 measured hours (4 under maintenance left out), 2 of them at the partial weight.
  t.match(yesterday, { date: '2026-11-23', partialOutageSeconds: 7200, maintenanceSeconds: 14400, degradedSeconds: 3600 })
  t.equal(yesterday?.uptime, Math.round((1 - (PARTIAL_OUTAGE_WEIGHT * 2) / 20) * 100_000) / 1000)
  t.match(today, { uptime: 100, majorOutageSeconds: 0 })
  t.ok(uptime.uptimePercentage! > 99 && uptime.uptimePercentage! < 100)
})

t.test('uptime: no data before the component existed, nor on a day spent in maintenance', async (t) => {
  const now = at('2026-11-24T12:00:00Z')
  const young = uptimeOf([{ status: 'operational', changedAt: at('2026-11-24T06:00:00Z') }], now)
  t.equal(young.days[0]?.uptime, null)
  t.equal(young.days.at(-1)?.uptime, 100)
  t.equal(young.uptimePercentage, 100)
  const inMaintenance = uptimeOf([{ status: 'under_maintenance', changedAt: at('2026-11-24T00:00:00Z') }], now)
  t.equal(inMaintenance.days.at(-1)?.uptime, null)
  t.equal(inMaintenance.uptimePercentage, null)
  t.equal(uptimeOf([], now).uptimePercentage, null)
})

t.test('uptime: the day a component was created counts whole, as Statuspage counts it', async (t) => {
  const now = at('2026-11-24T12:00:00Z')
  const fresh = uptimeOf(
    [
      { status: 'operational', changedAt: at('2026-11-24T11:55:00Z') },
      { status: 'major_outage', changedAt: at('2026-11-24T11:56:00Z') },
      { status: 'operational', changedAt: at('2026-11-24T11:56:42Z') },
    ],
    now,
  )
  // 42 s down of the 12 hours of the day so far, not of the 5 minutes since creation (86 %).
  t.equal(fresh.days.at(-1)?.uptime, 99.903)
  t.equal(fresh.uptimePercentage, 99.903)
  t.equal(fresh.days.at(-2)?.uptime, null, 'the day before it existed: no data')
  t.equal(fresh.days.filter((day) => day.uptime !== null).length, 1)
})

t.test('the banner reads what people declared of a component, and its checks only where the page follows them', async (t) => {
  const heldByCheck = { status: 'major_outage', declaredStatus: 'operational' }
  t.equal(bannerStatusOf(heldByCheck, { bannerFollowsChecks: false }), 'operational')
  t.equal(bannerStatusOf(heldByCheck, { bannerFollowsChecks: true }), 'major_outage')
  const declared = { status: 'partial_outage', declaredStatus: 'partial_outage' }
  t.equal(bannerStatusOf(declared, { bannerFollowsChecks: false }), 'partial_outage')
})
