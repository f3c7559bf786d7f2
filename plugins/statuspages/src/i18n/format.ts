import type { Messages } from './messages.js'

const dateTimes = new Map<string, Intl.DateTimeFormat>()
const percents = new Map<string, Intl.NumberFormat>()

/** A date and time in a page's time zone, for people: "24 Nov 2026, 09:30 CET", "24.11.2026, 09:30 MEZ". */
export function dateTime(messages: Messages, date: Date, timeZone: string): string {
  const key = `${messages.intlLocale}|${timeZone}`
  let format = dateTimes.get(key)
  if (!format) {
    format = new Intl.DateTimeFormat(messages.intlLocale, {
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone,
      timeZoneName: 'short',
    })
    dateTimes.set(key, format)
  }
  return format.format(date)
}

/** A percentage (0 to 100) as the language writes it: "99.95%", "99,95 %". */
export function percentage(messages: Messages, value: number): string {
  let format = percents.get(messages.intlLocale)
  if (!format) {
    format = new Intl.NumberFormat(messages.intlLocale, { style: 'percent', maximumFractionDigits: 4 })
    percents.set(messages.intlLocale, format)
  }
  return format.format(value / 100)
}
