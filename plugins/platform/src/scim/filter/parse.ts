import { ScimError } from '../errors.js'

// The SCIM filter grammar (RFC 7644 §3.4.2.2), parsed by hand. The maintained parser on npm,
// scim2-parse-filter, refuses the bare-word values identity providers send
// (`userName sw O`, `meta.created gt 2015-10-10T14:38:21Z`, from Azure's reference suite) and
// reads `emails[type eq "work"].value eq "x"` as two independent conditions, which can match
// two different e-mails. The grammar is small; the tree below compiles straight to SQL.

export type CompareOperator = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le'
export type FilterValue = string | number | boolean | null

/** An attribute path, names lower-cased: `name.familyName` is `{ name: 'name', sub: 'familyname' }`. */
export interface AttributePath {
  /** The schema URN when the path carried one (`urn:...:enterprise:2.0:User:department`). */
  schema?: string
  name: string
  sub?: string
}

export type Filter =
  | { kind: 'compare'; path: AttributePath; operator: CompareOperator; value: FilterValue }
  | { kind: 'present'; path: AttributePath }
  | { kind: 'and' | 'or'; left: Filter; right: Filter }
  | { kind: 'not'; filter: Filter }
  /** `emails[type eq "work"]`: some element of a multi-valued attribute matches `filter`. */
  | { kind: 'element'; path: AttributePath; filter: Filter }

const compareOperators = new Set<string>(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'])
const CORE_SCHEMA_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:'

type Token = { type: '(' | ')' | '[' | ']' } | { type: 'string'; value: string } | { type: 'word'; value: string }

function invalid(detail: string): ScimError {
  return new ScimError(400, `invalid filter: ${detail}`, 'invalidFilter')
}

function tokenize(input: string): Token[] {
  const tokens: Token[] = []
  let at = 0
  while (at < input.length) {
    const character = input.charAt(at)
    if (/\s/.test(character)) {
      at += 1
    } else if (character === '(' || character === ')' || character === '[' || character === ']') {
      tokens.push({ type: character })
      at += 1
    } else if (character === '"') {
      let end = at + 1
      while (end < input.length && input[end] !== '"') end += input[end] === '\\' ? 2 : 1
      if (end >= input.length) throw invalid('a string is not closed')
      try {
        tokens.push({ type: 'string', value: JSON.parse(input.slice(at, end + 1)) as string })
      } catch {
        throw invalid(`bad string ${input.slice(at, end + 1)}`)
      }
      at = end + 1
    } else {
      let end = at
      while (end < input.length && !/[\s()[\]"]/.test(input.charAt(end))) end += 1
      tokens.push({ type: 'word', value: input.slice(at, end) })
      at = end
    }
  }
  return tokens
}

/** `name.familyName`, `urn:...:User:manager.value`, `emails`; names are case-insensitive. */
export function parseAttributePath(text: string): AttributePath {
  let schema: string | undefined
  let rest = text
  const colon = text.lastIndexOf(':')
  if (colon >= 0) {
    schema = text.slice(0, colon).toLowerCase()
    rest = text.slice(colon + 1)
    // The core schema's own URN adds nothing: `urn:...:core:2.0:User:userName` is `userName`.
    if (schema.startsWith(CORE_SCHEMA_PREFIX.toLowerCase())) schema = undefined
  }
  const parts = rest.split('.')
  if (parts.length > 2 || parts.some((part) => !/^[A-Za-z$][\w$-]*$/.test(part))) throw invalid(`bad attribute path ${text}`)
  const [name = '', sub] = parts
  return { ...(schema ? { schema } : {}), name: name.toLowerCase(), ...(sub ? { sub: sub.toLowerCase() } : {}) }
}

function literal(token: Token | undefined): FilterValue {
  if (!token) throw invalid('a comparison has no value')
  if (token.type === 'string') return token.value
  if (token.type !== 'word') throw invalid('a comparison has no value')
  const word = token.value
  const lower = word.toLowerCase()
  if (lower === 'true') return true
  if (lower === 'false') return false
  if (lower === 'null') return null
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(word)) return Number(word)
  // Not JSON, but what some providers send (`userName sw O`): read as the string it spells.
  return word
}

/**
 * Bounds on what one filter may ask: parentheses, `not(...)` and value filters nested at most
 * MAX_NESTING deep, at most MAX_CONDITIONS comparisons. Identity providers send a handful; the
 * bounds keep a hostile filter from exhausting the parser's or PostgreSQL's stack.
 */
export const MAX_NESTING = 32
export const MAX_CONDITIONS = 100

class Parser {
  private at = 0
  private nesting = 0
  private conditions = 0
  constructor(private readonly tokens: Token[]) {}

  private enter(): void {
    this.nesting += 1
    if (this.nesting > MAX_NESTING) throw invalid(`nested more than ${MAX_NESTING} levels deep`)
  }

  parse(): Filter {
    const filter = this.or()
    const extra = this.tokens[this.at]
    if (extra) throw invalid(`unexpected ${this.describe(extra)}`)
    return filter
  }

  private describe(token: Token): string {
    return 'value' in token ? `"${token.value}"` : `"${token.type}"`
  }

  private peekWord(): string | undefined {
    const token = this.tokens[this.at]
    return token?.type === 'word' ? token.value.toLowerCase() : undefined
  }

  private expect(type: '(' | ')' | '[' | ']'): void {
    const token = this.tokens[this.at]
    if (token?.type !== type) throw invalid(`expected "${type}"`)
    this.at += 1
  }

  private or(): Filter {
    let left = this.and()
    while (this.peekWord() === 'or') {
      this.at += 1
      left = { kind: 'or', left, right: this.and() }
    }
    return left
  }

  private and(): Filter {
    let left = this.unary()
    while (this.peekWord() === 'and') {
      this.at += 1
      left = { kind: 'and', left, right: this.unary() }
    }
    return left
  }

  private unary(): Filter {
    const token = this.tokens[this.at]
    if (!token) throw invalid('the filter ends too early')
    if (token.type === '(') {
      this.at += 1
      this.enter()
      const inner = this.or()
      this.expect(')')
      this.nesting -= 1
      return inner
    }
    if (this.peekWord() === 'not') {
      this.at += 1
      this.expect('(')
      this.enter()
      const inner = this.or()
      this.expect(')')
      this.nesting -= 1
      return { kind: 'not', filter: inner }
    }
    if (token.type !== 'word') throw invalid(`unexpected ${this.describe(token)}`)
    this.at += 1
    return this.attributeExpression(token.value)
  }

  private attributeExpression(pathText: string): Filter {
    const path = parseAttributePath(pathText)
    if (this.tokens[this.at]?.type === '[') {
      if (path.sub) throw invalid(`${pathText}[...] names a sub-attribute before the brackets`)
      this.at += 1
      this.enter()
      const inner = this.or()
      this.expect(']')
      this.nesting -= 1
      const element: Filter = { kind: 'element', path, filter: inner }
      // `emails[type eq "work"].value eq "x"`: both conditions hold for the same element.
      const next = this.tokens[this.at]
      if (next?.type === 'word' && next.value.startsWith('.')) {
        this.at += 1
        const sub = next.value.slice(1)
        const condition = this.condition({ name: sub.toLowerCase() }, sub)
        return { kind: 'element', path, filter: { kind: 'and', left: inner, right: condition } }
      }
      return element
    }
    return this.condition(path, pathText)
  }

  private condition(path: AttributePath, pathText: string): Filter {
    this.conditions += 1
    if (this.conditions > MAX_CONDITIONS) throw invalid(`more than ${MAX_CONDITIONS} conditions`)
    const operator = this.peekWord()
    if (operator === 'pr') {
      this.at += 1
      return { kind: 'present', path }
    }
    if (!operator || !compareOperators.has(operator))
      throw invalid(`${pathText} needs an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr)`)
    this.at += 1
    const value = literal(this.tokens[this.at])
    this.at += 1
    return { kind: 'compare', path, operator: operator as CompareOperator, value }
  }
}

/** Parses a SCIM filter; anything it cannot read is a 400 `invalidFilter`. */
export function parseFilter(text: string): Filter {
  if (text.trim() === '') throw invalid('the filter is empty')
  return new Parser(tokenize(text)).parse()
}
