// The telemetry privacy rule (docs/decisions/0022): analytics are for counting what people do
// with the product, not for keeping who they are or what secrets they hold. A property value that
// looks like an e-mail address or a credential is replaced before it is stored, unless the event
// names that property in `context.declaredPii` (a deliberate choice its sender made).

export const REDACTED = '[redacted]'

// An address anywhere in the value: a character of a local part, '@', then a domain with a dot and
// two letters. Written so a match can start only one character before an '@' and each '@' scans
// only as far as the next, so any value is read in linear time; the unanchored `[^…]+@` it
// replaces took seconds on a 0.5 MB value without '@' (issue 51).
const EMAIL = /[^\s@<>()",;:]@[^\s@<>()",;:]+?\.[a-z]{2}/i
const CREDENTIALS = [
  /^eyJ[\w-]+\.[\w-]+\.[\w-]*$/, // a JWT
  /^(?:sk|rk|pk|whsec|xox[abpr]|ghp|gho|github_pat|glpat|AKIA)[_-]?[A-Za-z0-9_-]{12,}/, // vendors' key prefixes
  /^bearer\s+\S+/i,
]
// A long opaque key: 32 or more letters and digits without spaces. Ids (UUIDs) and lowercase hex
// digests (commit ids, content hashes) are what product events legitimately carry: kept.
const OPAQUE = /^(?=.*\d)(?=.*[a-zA-Z])[A-Za-z0-9+/_=-]{32,}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const HEX = /^[0-9a-f]+$/

function sensitive(value: string): boolean {
  const trimmed = value.trim()
  if (EMAIL.test(value) || CREDENTIALS.some((pattern) => pattern.test(trimmed))) return true
  return OPAQUE.test(trimmed) && !UUID.test(trimmed) && !HEX.test(trimmed)
}

/**
 * `properties` with every string that looks like an e-mail address or a credential replaced,
 * at any depth, except under the top-level names in `declared`; and the paths it replaced.
 */
export function redactProperties(
  properties: Record<string, unknown>,
  declared: readonly string[] = [],
): {
  properties: Record<string, unknown>
  redacted: string[]
} {
  const redacted: string[] = []
  const keep = new Set(declared)
  const walk = (value: unknown, path: string): unknown => {
    if (typeof value === 'string') {
      if (!sensitive(value)) return value
      redacted.push(path)
      return REDACTED
    }
    if (Array.isArray(value)) return value.map((item, index) => walk(item, `${path}/${index}`))
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, `${path}/${key}`)]))
    return value
  }
  const result: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(properties)) result[key] = keep.has(key) ? value : walk(value, `properties/${key}`)
  return { properties: result, redacted }
}
