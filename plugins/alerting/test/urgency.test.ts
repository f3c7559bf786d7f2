import t from 'tap'
import { planFor, urgencyOf, withinSupportHours, type PagingPreferences } from '../src/oncall/paging-plan.js'

// Urgency and notification rules (decision 0014, "Urgency and notification rules").

const weekdays = { timeZone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], startTime: '09:00', endTime: '18:00' }
const nights = { timeZone: 'UTC', days: [5], startTime: '22:00', endTime: '06:00' }

t.test('support hours on the service’s clock, a window past midnight belonging to the day it starts', async (t) => {
  t.ok(withinSupportHours(weekdays, new Date('2026-11-27T08:30:00Z')), 'Friday 09:30 in Berlin')
  t.notOk(withinSupportHours(weekdays, new Date('2026-11-27T07:30:00Z')), 'Friday 08:30 in Berlin')
  t.notOk(withinSupportHours(weekdays, new Date('2026-11-28T10:00:00Z')), 'Saturday')
  t.notOk(withinSupportHours(weekdays, new Date('2026-11-27T17:00:00Z')), 'the end is not within')
  t.ok(withinSupportHours(nights, new Date('2026-11-27T23:00:00Z')), 'Friday night')
  t.ok(withinSupportHours(nights, new Date('2026-11-28T05:59:00Z')), 'early Saturday belongs to Friday')
  t.notOk(withinSupportHours(nights, new Date('2026-11-27T05:00:00Z')), 'early Friday belongs to Thursday')
})

t.test('P1 and P2 are high urgency within support hours or with none; the rest are low', async (t) => {
  const friday = new Date('2026-11-27T08:30:00Z')
  const saturday = new Date('2026-11-28T10:00:00Z')
  t.equal(urgencyOf('P1', undefined, saturday), 'high')
  t.equal(urgencyOf('P2', weekdays, friday), 'high')
  t.equal(urgencyOf('P1', weekdays, saturday), 'low')
  t.equal(urgencyOf('P3', undefined, friday), 'low')
})

const preferences = (change: Partial<PagingPreferences>): PagingPreferences => ({
  channels: {
    email: { enabled: true, address: null },
    sms: { enabled: true, phoneNumber: '+4915112345678' },
    voice: { enabled: false, phoneNumber: null },
    push: { enabled: true },
  },
  priorities: { P1: ['sms', 'email'], P3: ['email'] },
  rules: null,
  quietHours: { enabled: false, start: '22:00', end: '07:00', timeZone: 'UTC', bypassPriorities: ['P1'] },
  whenResolved: true,
  ...change,
})

t.test('rules page each channel at its delay; without rules the priority’s channels page at once', async (t) => {
  const at = new Date('2026-11-27T12:00:00Z')
  t.same(planFor(preferences({}), 'P1', 'high', at), { now: ['sms', 'email'], later: [] })
  const rules = {
    high: [
      { channel: 'push' as const, delayMinutes: 0 },
      { channel: 'sms' as const, delayMinutes: 2 },
      { channel: 'voice' as const, delayMinutes: 5 },
    ],
    low: [{ channel: 'email' as const, delayMinutes: 0 }],
  }
  t.same(planFor(preferences({ rules }), 'P1', 'high', at), { now: ['push'], later: [{ channel: 'sms', delayMinutes: 2 }] }, 'voice is off')
  t.same(planFor(preferences({ rules }), 'P1', 'low', at), { now: ['email'], later: [] })
  const quiet = { enabled: true, start: '10:00', end: '14:00', timeZone: 'UTC', bypassPriorities: ['P1'] }
  t.match(planFor(preferences({ rules, quietHours: quiet }), 'P2', 'high', at), { now: [], later: [], reason: /quiet hours/ })
  const off = { ...rules, low: [{ channel: 'voice' as const, delayMinutes: 0 }] }
  t.match(planFor(preferences({ rules: off }), 'P3', 'low', at), { now: [], later: [], reason: /no enabled channel in the low-urgency/ })
})
