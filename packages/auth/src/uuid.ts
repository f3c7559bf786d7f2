const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Ids are checked before they reach SQL, so a malformed one is a 404 and not a cast error. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}
