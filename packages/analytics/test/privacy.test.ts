import t from 'tap'
import { assertLinearTime } from '@svc/testkit/linear-time'
import { REDACTED, redactProperties } from '../src/privacy.js'

t.test('addresses anywhere in a value are redacted; what only looks near one is kept', async (t) => {
  const { properties, redacted } = redactProperties({
    to: 'ada@example.com',
    note: 'mail "Ada" <ada.lovelace@mail.example.org> today',
    handle: '@ada',
    version: 'v1.2@build',
    nested: { list: ['x', 'b@c.de'] },
  })
  t.same(properties, { to: REDACTED, note: REDACTED, handle: '@ada', version: 'v1.2@build', nested: { list: ['x', REDACTED] } })
  t.same(redacted.sort(), ['properties/nested/list/1', 'properties/note', 'properties/to'])
})

t.test('a large value is read in linear time, whatever it holds', async (t) => {
  const size = 60_000
  const redact = (value: string) => redactProperties({ value })
  const benign = 'lorem ipsum '.repeat(size / 12)
  // No '@' at all: the unanchored pattern this replaced tried every start against the whole run.
  assertLinearTime(t, redact, { crafted: 'x'.repeat(size), benign }, 'a run without @')
  // Many '@' with dotted runs after each: every '@' may scan only to the next.
  assertLinearTime(t, redact, { crafted: 'a@a.'.repeat(size / 4), benign }, 'many @ with dots')
  assertLinearTime(t, redact, { crafted: `a@${'a.1'.repeat(size / 3)}`, benign }, 'one @ and a long dotted domain')
})
