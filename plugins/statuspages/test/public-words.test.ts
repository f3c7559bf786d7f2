import t from 'tap'
import { publicIncidentName } from '../src/incidents/public-words.js'

// A public incident's name when the caller gives none: the page's own components and how badly
// they are hit, never the internal alert title (decision 0019).
t.test('the name lists the components affected, each name once', async (t) => {
  t.equal(publicIncidentName('major_outage', ['Checkout']), 'Outage affecting Checkout')
  t.equal(publicIncidentName('partial_outage', ['Checkout', 'Search', 'Login']), 'Partial outage affecting Checkout, Search, and Login')
  t.equal(
    publicIncidentName('major_outage', ['Payments', 'Payments']),
    'Outage affecting Payments',
    'two components of one name on two groups',
  )
  t.equal(publicIncidentName('operational', []), 'Problems affecting some of our services')
})
