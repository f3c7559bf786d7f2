import t from 'tap'
import { finalShifts, layerShifts, onCallAt, type Layer } from '../src/oncall/schedules/rotation.js'

const [ada, bo, cy] = ['ada', 'bo', 'cy']
const at = (iso: string) => new Date(iso)
const hours = (shift: { start: Date; end: Date }) => (shift.end.getTime() - shift.start.getTime()) / 3_600_000
const plain = (shifts: Array<{ userId: string; start: Date; end: Date }>) =>
  shifts.map((shift) => [shift.userId, shift.start.toISOString(), shift.end.toISOString()])

const layer = (overrides: Partial<Layer>): Layer => ({
  name: 'Primary',
  start: '2026-03-23',
  handoffTime: '09:00',
  turn: { length: 1, unit: 'weeks' },
  users: [ada!, bo!],
  restriction: null,
  ...overrides,
})

t.test('Europe/Berlin: a weekly hand-off stays at 09:00 local across the spring change (a 167-hour turn)', async (t) => {
  const shifts = layerShifts(layer({}), 'Europe/Berlin', at('2026-03-23T00:00:00Z'), at('2026-04-13T00:00:00Z'))
  t.same(plain(shifts), [
    [ada, '2026-03-23T08:00:00.000Z', '2026-03-30T07:00:00.000Z'],
    [bo, '2026-03-30T07:00:00.000Z', '2026-04-06T07:00:00.000Z'],
    [ada, '2026-04-06T07:00:00.000Z', '2026-04-13T00:00:00.000Z'],
  ])
  t.equal(hours(shifts[0]!), 167, 'the clocks went forward an hour during the first turn')
})

t.test('Europe/Berlin: a daily turn over the autumn change lasts 25 hours', async (t) => {
  const daily = layer({ start: '2026-10-24', turn: { length: 1, unit: 'days' }, users: [ada!, bo!, cy!] })
  const shifts = layerShifts(daily, 'Europe/Berlin', at('2026-10-24T00:00:00Z'), at('2026-10-27T00:00:00Z'))
  t.same(plain(shifts), [
    [ada, '2026-10-24T07:00:00.000Z', '2026-10-25T08:00:00.000Z'],
    [bo, '2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z'],
    [cy, '2026-10-26T08:00:00.000Z', '2026-10-27T00:00:00.000Z'],
  ])
  t.equal(hours(shifts[0]!), 25)
})

t.test('Europe/Berlin: turns measured in hours are elapsed hours, whatever the clocks do', async (t) => {
  const twelve = layer({ start: '2026-03-28', handoffTime: '20:00', turn: { length: 12, unit: 'hours' } })
  const shifts = layerShifts(twelve, 'Europe/Berlin', at('2026-03-28T19:00:00Z'), at('2026-03-29T19:00:00Z'))
  t.same(plain(shifts), [
    [ada, '2026-03-28T19:00:00.000Z', '2026-03-29T07:00:00.000Z'],
    [bo, '2026-03-29T07:00:00.000Z', '2026-03-29T19:00:00.000Z'],
  ])
})

t.test('America/New_York: business hours on weekdays keep 09:00–17:00 local across the March change', async (t) => {
  const business = layer({
    start: '2026-03-02',
    turn: { length: 1, unit: 'weeks' },
    restriction: { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '09:00', to: '17:00' },
  })
  const shifts = layerShifts(business, 'America/New_York', at('2026-03-06T00:00:00Z'), at('2026-03-10T00:00:00Z'))
  t.same(plain(shifts), [
    [ada, '2026-03-06T14:00:00.000Z', '2026-03-06T22:00:00.000Z'],
    [bo, '2026-03-09T13:00:00.000Z', '2026-03-09T21:00:00.000Z'],
  ])
})

t.test('America/New_York: a night window over the November change is nine hours long', async (t) => {
  const nights = layer({
    start: '2026-10-26',
    turn: { length: 1, unit: 'weeks' },
    users: [ada!],
    restriction: { days: ['saturday'], from: '22:00', to: '06:00' },
  })
  const shifts = layerShifts(nights, 'America/New_York', at('2026-10-31T00:00:00Z'), at('2026-11-02T00:00:00Z'))
  t.same(plain(shifts), [[ada, '2026-11-01T02:00:00.000Z', '2026-11-01T11:00:00.000Z']])
  t.equal(hours(shifts[0]!), 9, '22:00 EDT to 06:00 EST')
})

t.test('America/New_York: a hand-off time the spring change skips happens when the clocks resume', async (t) => {
  const daily = layer({ start: '2026-03-07', handoffTime: '02:30', turn: { length: 1, unit: 'days' } })
  const shifts = layerShifts(daily, 'America/New_York', at('2026-03-07T00:00:00Z'), at('2026-03-10T00:00:00Z'))
  t.same(
    shifts.map((shift) => shift.start.toISOString()),
    ['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z'],
    '02:30 EST, 03:30 EDT (02:30 does not exist that night), 02:30 EDT',
  )
})

t.test('a layer covers nothing before its start', async (t) => {
  t.same(layerShifts(layer({}), 'UTC', at('2026-01-01T00:00:00Z'), at('2026-03-01T00:00:00Z')), [])
  t.same(layerShifts(layer({}), 'UTC', at('2026-03-23T09:00:00Z'), at('2026-03-23T09:00:00Z')), [], 'an empty range')
})

t.test('later layers cover earlier ones, overrides cover all, and one person’s adjacent shifts merge', async (t) => {
  const weekdays = layer({ name: 'Weekdays', start: '2026-06-01', turn: { length: 1, unit: 'weeks' }, users: [ada!] })
  const weekend = layer({
    name: 'Weekend',
    start: '2026-06-01',
    turn: { length: 1, unit: 'weeks' },
    users: [bo!],
    restriction: { days: ['saturday'], from: '09:00', to: '09:00' },
  })
  const overrides = [
    { userId: cy!, start: at('2026-06-03T12:00:00Z'), end: at('2026-06-03T14:00:00Z') },
    { userId: ada!, start: at('2026-06-06T10:00:00Z'), end: at('2026-06-06T11:00:00Z') },
  ]
  const shifts = finalShifts([weekdays, weekend], overrides, 'UTC', at('2026-06-03T00:00:00Z'), at('2026-06-08T00:00:00Z'))
  t.same(plain(shifts), [
    [ada, '2026-06-03T00:00:00.000Z', '2026-06-03T12:00:00.000Z'],
    [cy, '2026-06-03T12:00:00.000Z', '2026-06-03T14:00:00.000Z'],
    [ada, '2026-06-03T14:00:00.000Z', '2026-06-06T09:00:00.000Z'],
    [bo, '2026-06-06T09:00:00.000Z', '2026-06-06T10:00:00.000Z'],
    [ada, '2026-06-06T10:00:00.000Z', '2026-06-06T11:00:00.000Z'],
    [bo, '2026-06-06T11:00:00.000Z', '2026-06-07T09:00:00.000Z'],
    [ada, '2026-06-07T09:00:00.000Z', '2026-06-08T00:00:00.000Z'],
  ])
})

t.test('gaps stay gaps: nobody is on call where no layer reaches', async (t) => {
  const business = layer({ users: [ada!], restriction: { days: ['monday'], from: '09:00', to: '17:00' } })
  t.equal(onCallAt([business], [], 'UTC', at('2026-03-23T20:00:00Z')), undefined)
  t.same(plain([onCallAt([business], [], 'UTC', at('2026-03-30T10:00:00Z'))!]), [
    [ada, '2026-03-30T09:00:00.000Z', '2026-03-30T17:00:00.000Z'],
  ])
  const override = { userId: bo!, start: at('2026-03-23T20:00:00Z'), end: at('2026-03-23T21:00:00Z') }
  t.equal(onCallAt([business], [override], 'UTC', at('2026-03-23T20:30:00Z'))?.userId, bo, 'an override covers a gap too')
})

t.test('a long way into a rotation lands on the right turn', async (t) => {
  const daily = layer({ start: '2020-01-01', handoffTime: '00:00', turn: { length: 1, unit: 'days' }, users: [ada!, bo!, cy!] })
  // 2026-11-23 is day 2518 after 2020-01-01: 2518 mod 3 = 1.
  t.equal(onCallAt([daily], [], 'Europe/Berlin', at('2026-11-23T12:00:00Z'))?.userId, bo)
})
