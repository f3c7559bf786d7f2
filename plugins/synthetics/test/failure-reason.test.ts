import t from 'tap'
import type { Json } from '@svc/db'
import { describeAssertion, failureReason } from '../src/scheduling/failure-reason.js'

// What a check's alert says about why it fails (decision 0014, "What a page says").
const attempt = (assertions: Json[]): Json => ({ status: 'failing', startedAt: '2026-12-02T10:00:00Z', timings: { total: 12 }, assertions })

t.test('a failing run is told by its error, else its first failed assertion, else its status code', async (t) => {
  t.equal(failureReason({ statusCode: null, error: 'timed out after 5000 ms', attempts: null }), 'timed out after 5000 ms')
  t.equal(
    failureReason({
      statusCode: 503,
      error: null,
      attempts: [
        attempt([
          { source: 'responseTime', comparison: 'lessThan', target: '1000', actual: '12', passed: true },
          { source: 'statusCode', comparison: 'equals', target: '200', actual: '503', passed: false },
        ]),
      ],
    }),
    'status code 503, expected equal to 200',
    'the last attempt’s first failed assertion',
  )
  t.equal(failureReason({ statusCode: 502, error: null, attempts: [attempt([])] }), 'HTTP 502')
  t.equal(failureReason({ statusCode: null, error: null, attempts: null }), 'failing')
})

t.test('an assertion reads as what was seen and what was wanted', async (t) => {
  t.equal(
    describeAssertion({ source: 'jsonPath', property: '$.status', comparison: 'equals', target: 'ok', actual: 'down', passed: false }),
    'JSON path $.status down, expected equal to ok',
  )
  t.equal(
    describeAssertion({ source: 'header', property: 'x-cache', comparison: 'notEmpty', actual: null, passed: false }),
    'header x-cache absent, expected not empty',
  )
  t.match(
    describeAssertion({ source: 'body', comparison: 'contains', target: 'Welcome', actual: 'x'.repeat(200), passed: false }),
    /^body x{80}…, expected containing Welcome$/,
  )
})
