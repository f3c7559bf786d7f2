import t from 'tap'
import { checkState, regionStatus, targetOf } from '../src/scheduling/state.js'

t.test('a region fails after its consecutive failures; one short of them it is degraded', async (t) => {
  const twice = { failures: 2, quorum: 'any' as const }
  t.equal(regionStatus(['failing', 'failing', 'passing'], twice, true), 'failing')
  t.equal(regionStatus(['failing', 'passing'], twice, true), 'degraded')
  t.equal(regionStatus(['failing'], twice, true), 'degraded', 'not yet enough runs')
  t.equal(regionStatus(['degraded', 'failing'], twice, true), 'degraded')
  t.equal(regionStatus(['passing', 'failing'], twice, true), 'passing')
  t.equal(regionStatus([], twice, true), 'unknown', 'no result yet')
  t.equal(regionStatus(['passing'], twice, false), 'unknown', 'no runner: never passing')
})

t.test('the quorum decides when the check fails', async (t) => {
  const three = ['failing', 'failing', 'passing'] as const
  t.equal(checkState(three, 'any'), 'failing')
  t.equal(checkState(three, 'majority'), 'failing')
  t.equal(checkState(three, 'all'), 'degraded', 'short of the quorum: degraded')
  t.equal(checkState(['failing', 'passing'], 'majority'), 'degraded', 'half is not a majority')
  t.equal(checkState(['failing', 'failing'], 'all'), 'failing')
  t.equal(checkState(['unknown', 'unknown'], 'any'), 'unknown')
  t.equal(checkState(['unknown', 'passing'], 'any'), 'passing')
  t.equal(checkState(['failing', 'unknown'], 'all'), 'degraded', 'an unknown region never counts as failing')
  t.equal(checkState([], 'any'), 'unknown')
})

t.test('what a check looks at, for people', async (t) => {
  t.equal(targetOf({ kind: 'http', request: { url: 'https://example.com/' } }), 'https://example.com/')
  t.equal(targetOf({ kind: 'tcp', request: { host: 'db', port: 5432 } }), 'db:5432')
  t.equal(targetOf({ kind: 'tls', request: { host: 'example.com' } }), 'example.com:443')
  t.equal(targetOf({ kind: 'dns', request: { name: 'example.com', recordType: 'MX' } }), 'example.com MX')
  t.equal(targetOf({ kind: 'heartbeat', request: {} }), 'heartbeat')
})
