import { JSONPath } from 'jsonpath-plus'
import { RE2JS } from 're2js'
import type { Assertion, AssertionOutcome } from './definitions.js'

/**
 * A `matches` target, compiled by RE2 (RE2JS, its JavaScript port): the pattern and the body both
 * come from the check's owner, and a backtracking engine would let one check's `(a+)+$` against
 * its own target's body stall every check of the process (issue 51). RE2 matches in time linear in
 * the body, and has no lookaround or backreferences, which such assertions do without.
 */
const compiledPatterns = new Map<string, RE2JS>()
const COMPILED_KEPT = 1_000

export function patternOf(target: string): RE2JS {
  let compiled = compiledPatterns.get(target)
  if (!compiled) {
    compiled = RE2JS.compile(RE2JS.translateRegExp(target))
    if (compiledPatterns.size >= COMPILED_KEPT) compiledPatterns.clear()
    compiledPatterns.set(target, compiled)
  }
  return compiled
}

/** A pattern saved before RE2 read them, that RE2 cannot read, holds for nothing. */
function matchesPattern(target: string, actual: string): boolean {
  try {
    return patternOf(target).test(actual)
  } catch {
    return false
  }
}

/** What an attempt observed that assertions can be made on. */
export interface Observed {
  statusCode?: number
  responseTimeMs: number
  headers?: Record<string, string | string[] | undefined>
  body?: string
}

/** The value an assertion looks at, as text (null: there is none, e.g. a missing header). */
function actualOf(assertion: Assertion, observed: Observed): string | null {
  switch (assertion.source) {
    case 'statusCode':
      return observed.statusCode === undefined ? null : String(observed.statusCode)
    case 'responseTime':
      return String(Math.round(observed.responseTimeMs))
    case 'body':
      return observed.body ?? null
    case 'header': {
      const value = observed.headers?.[(assertion.property ?? '').toLowerCase()]
      if (value === undefined) return null
      return Array.isArray(value) ? value.join(', ') : value
    }
    case 'jsonPath':
      return jsonPathValue(observed.body, assertion.property ?? '$')
  }
}

/** The first value a JSONPath selects in a JSON body, as text; null when the body is not JSON or nothing matches. */
export function jsonPathValue(body: string | undefined, path: string): string | null {
  if (body === undefined) return null
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return null
  }
  // `eval: false`: filter expressions are never evaluated as code (jsonpath-plus's script evaluation).
  const [first] = JSONPath({ path, json: json as object, wrap: true, eval: false }) as unknown[]
  if (first === undefined) return null
  return typeof first === 'string' ? first : JSON.stringify(first)
}

const numeric = (value: string | null | undefined) => (value === null || value === undefined || value.trim() === '' ? NaN : Number(value))

function compare(assertion: Assertion, actual: string | null): boolean {
  const target = assertion.target ?? ''
  switch (assertion.comparison) {
    case 'equals':
      return actual !== null && (actual === target || (!Number.isNaN(numeric(actual)) && numeric(actual) === numeric(target)))
    case 'notEquals':
      return !(actual !== null && (actual === target || (!Number.isNaN(numeric(actual)) && numeric(actual) === numeric(target))))
    case 'greaterThan':
      return numeric(actual) > numeric(target)
    case 'lessThan':
      return numeric(actual) < numeric(target)
    case 'contains':
      return actual !== null && actual.includes(target)
    case 'notContains':
      return actual === null || !actual.includes(target)
    case 'isEmpty':
      return actual === null || actual === ''
    case 'notEmpty':
      return actual !== null && actual !== ''
    case 'matches':
      return actual !== null && matchesPattern(target, actual)
  }
}

/** A comparison's target that can never be compared is bad input, found when the check is saved. */
export function assertionProblem(assertion: Assertion): string | undefined {
  const needsProperty = assertion.source === 'header' || assertion.source === 'jsonPath'
  if (needsProperty && !assertion.property)
    return `property: a ${assertion.source} assertion names its ${assertion.source === 'header' ? 'header' : 'JSONPath'}`
  if (!needsProperty && assertion.property !== undefined) return `property: a ${assertion.source} assertion takes none`
  if (assertion.source === 'jsonPath' && !assertion.property?.startsWith('$')) return 'property: a JSONPath starts with $'
  const unary = assertion.comparison === 'isEmpty' || assertion.comparison === 'notEmpty'
  if (!unary && assertion.target === undefined) return 'target: this comparison needs a target'
  if ((assertion.comparison === 'greaterThan' || assertion.comparison === 'lessThan') && Number.isNaN(numeric(assertion.target)))
    return 'target: must be a number for greaterThan and lessThan'
  if (
    (assertion.source === 'statusCode' || assertion.source === 'responseTime') &&
    !unary &&
    assertion.comparison !== 'matches' &&
    Number.isNaN(numeric(assertion.target))
  )
    return `target: ${assertion.source} is compared with a number`
  if (assertion.comparison === 'matches') {
    try {
      patternOf(assertion.target ?? '')
    } catch {
      return 'target: not a valid regular expression (RE2 syntax: no lookaround, no backreferences)'
    }
  }
  return undefined
}

/** Each assertion with what was seen and whether it held. */
export function evaluate(assertions: readonly Assertion[], observed: Observed): AssertionOutcome[] {
  return assertions.map((assertion) => {
    const actual = actualOf(assertion, observed)
    return {
      ...assertion,
      // A body can be large: the outcome keeps enough to read, not the whole of it.
      actual: actual !== null && actual.length > 500 ? `${actual.slice(0, 500)}…` : actual,
      passed: compare(assertion, actual),
    }
  })
}
