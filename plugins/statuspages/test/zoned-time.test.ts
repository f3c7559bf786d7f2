import t from 'tap'
import { isoInZone } from '../src/public/zoned-time.js'

t.test('an instant is written in the zone with its offset there, and reads back as the same instant', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['2026-11-28T07:30:00.123Z', 'Europe/Berlin', '2026-11-28T08:30:00.123+01:00'],
    ['2026-07-01T07:30:00.000Z', 'Europe/Berlin', '2026-07-01T09:30:00.000+02:00'],
    ['2026-11-28T07:30:00.999Z', 'America/Los_Angeles', '2026-11-27T23:30:00.999-08:00'],
    ['2026-11-28T07:30:00.000Z', 'Asia/Kolkata', '2026-11-28T13:00:00.000+05:30'],
    ['2026-11-28T07:30:00.000Z', 'America/St_Johns', '2026-11-28T04:00:00.000-03:30'],
    ['2026-11-28T07:30:00.000Z', 'UTC', '2026-11-28T07:30:00.000+00:00'],
    ['2026-03-29T01:30:00.000Z', 'Europe/Berlin', '2026-03-29T03:30:00.000+02:00'],
  ]
  for (const [instant, zone, written] of cases) {
    t.equal(isoInZone(new Date(instant), zone), written, `${instant} in ${zone}`)
    t.equal(new Date(written).toISOString(), instant)
  }
})
