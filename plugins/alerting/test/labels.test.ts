import t from 'tap'
import { labelsOf } from '../src/intake/event.js'

t.test('labels keep string values, write numbers and booleans as text, and drop the rest', async (t) => {
  t.same(labelsOf({ region: 'eu-west-1', replicas: 3, canary: false, nested: { a: 1 }, list: ['x'], missing: null }), {
    region: 'eu-west-1',
    replicas: '3',
    canary: 'false',
  })
  t.same(labelsOf('not an object'), {})
  t.same(labelsOf(['a', 'b']), {})
})

t.test('a label named __proto__ is a label, not the object’s prototype', async (t) => {
  const labels = labelsOf(JSON.parse('{"__proto__":"polluted","team":"db"}'))
  t.equal(Object.getPrototypeOf(labels), Object.prototype)
  t.same(Object.keys(labels), ['__proto__', 'team'])
  t.equal(JSON.stringify(labels), '{"__proto__":"polluted","team":"db"}')
})
