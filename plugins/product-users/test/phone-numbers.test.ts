import t from 'tap'
import { phoneNumberRefusal } from '../src/contact-methods/phone-numbers.js'

t.test('mobile and geographic numbers may receive codes; premium-rate and shared-cost ones may not', async (t) => {
  t.equal(phoneNumberRefusal('+4915112345678', undefined), undefined)
  t.equal(phoneNumberRefusal('+12015550123', undefined), undefined)
  t.match(phoneNumberRefusal('+33899123456', undefined), /premium-rate/)
  t.match(phoneNumberRefusal('+33810123456', undefined), /shared-cost/)
  t.match(phoneNumberRefusal('+999123456789', undefined), /not a valid phone number/)
})

t.test('an allow-list of countries refuses numbers elsewhere', async (t) => {
  t.equal(phoneNumberRefusal('+4915112345678', ['DE', 'AT']), undefined)
  t.match(phoneNumberRefusal('+12015550123', ['DE', 'AT']), /not in a country this installation sends to \(DE, AT\)/)
})
