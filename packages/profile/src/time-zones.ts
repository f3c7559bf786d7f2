const zones = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])

export function isTimeZone(value: string): boolean {
  return zones.has(value)
}
