import t from 'tap'
import { assertLinearTime } from '@svc/testkit/linear-time'
import { assertionProblem, evaluate, judge } from '../src/index.js'

const outcome = (assertion: Parameters<typeof evaluate>[0][number], observed: Parameters<typeof evaluate>[1]) =>
  evaluate([assertion], observed)[0]!

t.test('every comparison, on present and missing values', async (t) => {
  const observed = {
    statusCode: 204,
    responseTimeMs: 120.4,
    headers: { 'set-cookie': ['a=1', 'b=2'], etag: 'x' },
    body: '{"items":[1,2],"name":"api","nothing":null}',
  }
  const cases: Array<[Parameters<typeof evaluate>[0][number], boolean, string | null]> = [
    [{ source: 'statusCode', comparison: 'equals', target: '204' }, true, '204'],
    [{ source: 'statusCode', comparison: 'notEquals', target: '200' }, true, '204'],
    [{ source: 'statusCode', comparison: 'notEquals', target: '204' }, false, '204'],
    [{ source: 'responseTime', comparison: 'greaterThan', target: '100' }, true, '120'],
    [{ source: 'responseTime', comparison: 'lessThan', target: '100' }, false, '120'],
    [{ source: 'header', property: 'Set-Cookie', comparison: 'contains', target: 'b=2' }, true, 'a=1, b=2'],
    [{ source: 'header', property: 'x-absent', comparison: 'isEmpty' }, true, null],
    [{ source: 'header', property: 'x-absent', comparison: 'notContains', target: 'x' }, true, null],
    [{ source: 'header', property: 'x-absent', comparison: 'contains', target: 'x' }, false, null],
    [{ source: 'header', property: 'x-absent', comparison: 'matches', target: '.*' }, false, null],
    [{ source: 'header', property: 'x-absent', comparison: 'equals', target: '' }, false, null],
    [{ source: 'jsonPath', property: '$.items', comparison: 'equals', target: '[1,2]' }, true, '[1,2]'],
    [{ source: 'jsonPath', property: '$.nothing', comparison: 'equals', target: 'null' }, true, 'null'],
    [{ source: 'jsonPath', property: '$.missing', comparison: 'notEmpty' }, false, null],
    [{ source: 'body', comparison: 'notEmpty' }, true, observed.body],
    [{ source: 'body', comparison: 'matches', target: '"name":"a.i"' }, true, observed.body],
  ]
  for (const [assertion, passed, actual] of cases) {
    const result = outcome(assertion, observed)
    t.equal(result.passed, passed, JSON.stringify(assertion))
    t.equal(result.actual, actual, `${JSON.stringify(assertion)}: actual`)
  }
})

t.test('a JSONPath on a body that is not JSON, or on no body, finds nothing; a long body is cut in the outcome', async (t) => {
  t.equal(outcome({ source: 'jsonPath', property: '$.a', comparison: 'isEmpty' }, { responseTimeMs: 1, body: 'not json' }).actual, null)
  t.equal(outcome({ source: 'jsonPath', property: '$.a', comparison: 'isEmpty' }, { responseTimeMs: 1 }).passed, true)
  t.equal(outcome({ source: 'statusCode', comparison: 'isEmpty' }, { responseTimeMs: 1 }).passed, true, 'no status code (TCP)')
  t.equal(outcome({ source: 'body', comparison: 'isEmpty' }, { responseTimeMs: 1 }).passed, true)
  const long = outcome({ source: 'body', comparison: 'contains', target: 'end' }, { responseTimeMs: 1, body: `${'x'.repeat(600)}end` })
  t.equal(long.passed, true, 'compared on the whole body')
  t.equal(long.actual!.length, 501, 'shown cut to 500 characters and an ellipsis')
})

t.test('judging an attempt', async (t) => {
  t.equal(judge({ timings: { total: 10 }, assertions: [] }, null), 'passing')
  t.equal(judge({ timings: { total: 10 }, assertions: [] }, 5), 'degraded')
  t.equal(judge({ timings: { total: 1 }, assertions: [], error: 'x' }, 5), 'failing')
})

t.test('a body assertion’s pattern runs in linear time, and only RE2 syntax is saved', async (t) => {
  // The check's owner writes both the pattern and the body it runs on: with a backtracking engine,
  // `(a+)+$` on thirty 'a' and a 'b' would stall every check of the process.
  const matches = (body: string) => evaluate([{ source: 'body', comparison: 'matches', target: '(a+)+$' }], { responseTimeMs: 1, body })
  assertLinearTime(t, matches, { crafted: `${'a'.repeat(30)}b`, benign: 'x'.repeat(31) }, 'nested quantifiers')
  t.equal(matches('aaa')[0]!.passed, true)
  t.equal(matches('aaab')[0]!.passed, false)
  t.match(assertionProblem({ source: 'body', comparison: 'matches', target: '(?<=a)b' }), /RE2 syntax/, 'no lookaround')
  t.match(assertionProblem({ source: 'body', comparison: 'matches', target: '(a)\\1' }), /RE2 syntax/, 'no backreferences')
  t.equal(assertionProblem({ source: 'body', comparison: 'matches', target: '"status":\\s*"up"' }), undefined)
  const saved = evaluate([{ source: 'body', comparison: 'matches', target: '(?=x)x' }], { responseTimeMs: 1, body: 'x' })[0]!
  t.equal(saved.passed, false, 'a pattern saved before that RE2 cannot read holds for nothing')
})
