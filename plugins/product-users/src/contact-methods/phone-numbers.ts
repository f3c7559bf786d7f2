import { parsePhoneNumberFromString } from 'libphonenumber-js/max'

// Numbers are classified with libphonenumber's full metadata (Google's, kept current by the
// library's releases): the kinds of number a code must never be sent to, because the sender pays
// the receiver (premium rate) or shares the cost (shared cost). Decision 0012, "Phone numbers".
const REFUSED_TYPES = new Map([
  ['PREMIUM_RATE', 'premium-rate'],
  ['SHARED_COST', 'shared-cost'],
])

/** Why a number may not receive codes, or undefined when it may. */
export function phoneNumberRefusal(number: string, countries: readonly string[] | undefined): string | undefined {
  const parsed = parsePhoneNumberFromString(number)
  if (!parsed?.isValid()) return 'is not a valid phone number'
  const refused = REFUSED_TYPES.get(parsed.getType() ?? '')
  if (refused) return `is a ${refused} number: codes and pages are not sent to such numbers`
  if (countries && !(parsed.country && countries.includes(parsed.country)))
    return `is not in a country this installation sends to (${countries.join(', ')})`
  return undefined
}
