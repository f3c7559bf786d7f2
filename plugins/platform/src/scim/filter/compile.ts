import { sql, type RawBuilder } from 'kysely'
import { escapeLike } from '@svc/db'
import { ScimError } from '../errors.js'
import type { AttributePath, CompareOperator, Filter, FilterValue } from './parse.js'

/** One attribute a filter can test, as a SQL expression over the resource's row. */
export interface ScalarAttribute {
  kind: 'scalar'
  type: 'string' | 'boolean' | 'dateTime'
  /** `externalId` and ids compare exactly; names and e-mails case-insensitively. */
  caseExact: boolean
  expression: RawBuilder<unknown>
}

export function scalarAttribute(type: ScalarAttribute['type'], expression: RawBuilder<unknown>, caseExact = false): ScalarAttribute {
  return { kind: 'scalar', type, caseExact, expression }
}

/** A multi-valued attribute: a condition holds when some element satisfies it. */
export interface MultiValuedAttribute {
  kind: 'multi'
  /** `exists (select 1 from <elements> where <condition over the element scope>)`. */
  some(condition: (element: FilterScope) => RawBuilder<boolean>): RawBuilder<boolean>
  /**
   * A condition that every row with an element whose `value` equals this one (any letter case)
   * meets, and that an index answers: it narrows the rows before `some` checks them one by one.
   */
  holdingValue?(value: string): RawBuilder<boolean>
}

/** What the attributes of a resource (or of one element of a multi-valued one) are in SQL. */
export interface FilterScope {
  attribute(path: AttributePath): ScalarAttribute | MultiValuedAttribute | undefined
}

const stringOperators: Record<CompareOperator, string> = {
  eq: '=',
  ne: '<>',
  co: 'like',
  sw: 'like',
  ew: 'like',
  gt: '>',
  ge: '>=',
  lt: '<',
  le: '<=',
}
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/

function unsupported(detail: string): ScimError {
  return new ScimError(400, `invalid filter: ${detail}`, 'invalidFilter')
}

function pathText(path: AttributePath): string {
  return [path.schema, [path.name, path.sub].filter(Boolean).join('.')].filter(Boolean).join(':')
}

function compareString(
  attribute: ScalarAttribute,
  operator: CompareOperator,
  value: FilterValue,
  path: AttributePath,
): RawBuilder<boolean> {
  if (value === null) {
    if (operator === 'eq') return sql<boolean>`(${attribute.expression} is null)`
    if (operator === 'ne') return sql<boolean>`(${attribute.expression} is not null)`
    throw unsupported(`${pathText(path)} ${operator} null`)
  }
  if (typeof value === 'boolean') throw unsupported(`${pathText(path)} is a string, compared with ${value}`)
  const text = String(value)
  const operand =
    operator === 'co'
      ? `%${escapeLike(text)}%`
      : operator === 'sw'
        ? `${escapeLike(text)}%`
        : operator === 'ew'
          ? `%${escapeLike(text)}`
          : text
  const left = attribute.caseExact ? attribute.expression : sql`lower(${attribute.expression})`
  const right = attribute.caseExact ? sql`${operand}` : sql`lower(${operand})`
  const comparison = sql<boolean>`${left} ${sql.raw(stringOperators[operator])} ${right}`
  // An absent attribute is "not equal" to anything.
  return operator === 'ne' ? sql<boolean>`(${attribute.expression} is null or ${comparison})` : sql<boolean>`(${comparison})`
}

function compareBoolean(
  attribute: ScalarAttribute,
  operator: CompareOperator,
  value: FilterValue,
  path: AttributePath,
): RawBuilder<boolean> {
  const flag = typeof value === 'string' && /^(true|false)$/i.test(value) ? value.toLowerCase() === 'true' : value
  if (typeof flag !== 'boolean' || (operator !== 'eq' && operator !== 'ne')) {
    throw unsupported(`${pathText(path)} is a boolean: only eq and ne with true or false`)
  }
  return operator === 'eq'
    ? sql<boolean>`(${attribute.expression} = ${flag})`
    : sql<boolean>`(${attribute.expression} is distinct from ${flag})`
}

function compareDateTime(
  attribute: ScalarAttribute,
  operator: CompareOperator,
  value: FilterValue,
  path: AttributePath,
): RawBuilder<boolean> {
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) {
    throw unsupported(`${pathText(path)} is a dateTime: compare it with an ISO 8601 date`)
  }
  if (operator === 'co' || operator === 'sw' || operator === 'ew')
    throw unsupported(`${operator} does not apply to the dateTime ${pathText(path)}`)
  return sql<boolean>`(${attribute.expression} ${sql.raw(stringOperators[operator])} ${value}::timestamptz)`
}

function compare(attribute: ScalarAttribute, operator: CompareOperator, value: FilterValue, path: AttributePath): RawBuilder<boolean> {
  if (attribute.type === 'boolean') return compareBoolean(attribute, operator, value, path)
  if (attribute.type === 'dateTime') return compareDateTime(attribute, operator, value, path)
  return compareString(attribute, operator, value, path)
}

function present(attribute: ScalarAttribute): RawBuilder<boolean> {
  return attribute.type === 'string'
    ? sql<boolean>`(${attribute.expression} is not null and ${attribute.expression} <> '')`
    : sql<boolean>`(${attribute.expression} is not null)`
}

function resolve(scope: FilterScope, path: AttributePath) {
  const attribute = scope.attribute(path)
  if (!attribute) throw unsupported(`unknown or unfilterable attribute ${pathText(path)}`)
  return attribute
}

/** The string `x` of a `value eq "x"` among the conditions a filter ANDs together, if any. */
function valueEquality(filter: Filter): string | undefined {
  if (filter.kind === 'and') return valueEquality(filter.left) ?? valueEquality(filter.right)
  if (
    filter.kind === 'compare' &&
    filter.operator === 'eq' &&
    typeof filter.value === 'string' &&
    filter.path.name === 'value' &&
    !filter.path.sub &&
    !filter.path.schema
  ) {
    return filter.value
  }
  return undefined
}

/** `some(...)`, narrowed first by the attribute's index when the filter pins a value. */
function someElement(
  attribute: MultiValuedAttribute,
  inner: Filter,
  condition: (element: FilterScope) => RawBuilder<boolean>,
): RawBuilder<boolean> {
  const value = attribute.holdingValue ? valueEquality(inner) : undefined
  const exists = attribute.some(condition)
  return value !== undefined && attribute.holdingValue ? sql<boolean>`(${attribute.holdingValue(value)} and ${exists})` : exists
}

/**
 * A multi-valued attribute named with a sub-attribute (`emails.value`) or alone (`emails`,
 * meaning its `value`): the condition holds for some element.
 */
function onElements(
  scope: FilterScope,
  path: AttributePath,
  condition: (element: ScalarAttribute, elementPath: AttributePath) => RawBuilder<boolean>,
): RawBuilder<boolean> | undefined {
  const whole = scope.attribute({ ...(path.schema ? { schema: path.schema } : {}), name: path.name })
  if (whole?.kind !== 'multi') return undefined
  const elementPath = { name: path.sub ?? 'value' }
  return whole.some((element) => {
    const sub = resolve(element, elementPath)
    if (sub.kind !== 'scalar') throw unsupported(`${pathText(path)} is not a simple attribute`)
    return condition(sub, elementPath)
  })
}

/** The same, for `emails.value eq "x"`: narrowed by the attribute's index when it has one. */
function compareOnElements(
  scope: FilterScope,
  path: AttributePath,
  operator: CompareOperator,
  value: FilterValue,
): RawBuilder<boolean> | undefined {
  const whole = scope.attribute({ ...(path.schema ? { schema: path.schema } : {}), name: path.name })
  const elements = onElements(scope, path, (element, elementPath) => compare(element, operator, value, elementPath))
  if (!elements || whole?.kind !== 'multi' || !whole.holdingValue) return elements
  const pinned = operator === 'eq' && typeof value === 'string' && (path.sub ?? 'value') === 'value'
  return pinned ? sql<boolean>`(${whole.holdingValue(value)} and ${elements})` : elements
}

/** Compiles a parsed filter into one SQL condition; what the scope cannot express is a 400. */
export function compileFilter(filter: Filter, scope: FilterScope): RawBuilder<boolean> {
  switch (filter.kind) {
    case 'and':
      return sql<boolean>`(${compileFilter(filter.left, scope)} and ${compileFilter(filter.right, scope)})`
    case 'or':
      return sql<boolean>`(${compileFilter(filter.left, scope)} or ${compileFilter(filter.right, scope)})`
    case 'not':
      return sql<boolean>`(not coalesce(${compileFilter(filter.filter, scope)}, false))`
    case 'element': {
      const attribute = resolve(scope, filter.path)
      if (attribute.kind !== 'multi') throw unsupported(`${pathText(filter.path)} is not multi-valued`)
      return someElement(attribute, filter.filter, (element) => compileFilter(filter.filter, element))
    }
    case 'present': {
      const direct = scope.attribute(filter.path)
      if (direct?.kind === 'scalar') return present(direct)
      if (direct?.kind === 'multi') return direct.some(() => sql<boolean>`true`)
      const elements = onElements(scope, filter.path, (element) => present(element))
      if (!elements) throw unsupported(`unknown or unfilterable attribute ${pathText(filter.path)}`)
      return elements
    }
    case 'compare': {
      const direct = scope.attribute(filter.path)
      if (direct?.kind === 'scalar') return compare(direct, filter.operator, filter.value, filter.path)
      const elements = compareOnElements(scope, filter.path, filter.operator, filter.value)
      if (!elements) throw unsupported(`unknown or unfilterable attribute ${pathText(filter.path)}`)
      return elements
    }
  }
}
