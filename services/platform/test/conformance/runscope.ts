// A player for Runscope test exports (the format of Okta's SCIM SPEC test): each step is a
// request with {{variables}}, assertions on the answer, and variables taken from it. Runscope
// is a hosted service with no runner on npm, so this reads its documented step format itself.

export interface RunscopeStep {
  note?: string
  method?: string
  url?: string
  body?: string
  headers?: Record<string, string[]>
  assertions?: { source: string; property?: string; comparison: string; value: string | number | null }[]
  variables?: { source: string; name: string; property: string }[]
}

export interface StepResult {
  note: string
  status: number
  /** One entry per assertion: what it checked and whether it held. */
  checks: { description: string; passed: boolean; skipped?: string }[]
}

function substitute(text: string, variables: Map<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => variables.get(name) ?? whole)
}

/** `Resources[0].name.familyName` in a parsed JSON body. */
function property(json: unknown, path: string): unknown {
  let current: unknown = json
  for (const part of path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean)) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<string, unknown>)[part]
  }
  return current
}

function compare(comparison: string, actual: unknown, expected: string | number | null): boolean {
  switch (comparison) {
    case 'equal':
      return String(actual) === String(expected)
    case 'equal_number':
      return Number(actual) === Number(expected)
    case 'not_empty':
      return actual !== undefined && actual !== null && actual !== '' && !(Array.isArray(actual) && actual.length === 0)
    case 'has_value':
    case 'contains':
      return Array.isArray(actual) ? actual.map(String).includes(String(expected)) : String(actual ?? '').includes(String(expected))
    case 'is_a_number':
      return typeof actual === 'number' || (typeof actual === 'string' && actual.trim() !== '' && !Number.isNaN(Number(actual)))
    default:
      throw new Error(`unknown Runscope comparison ${comparison}`)
  }
}

/** Plays the steps in order over real HTTP; pauses (steps without a request) are skipped. */
export async function playRunscope(steps: RunscopeStep[], variables: Map<string, string>): Promise<StepResult[]> {
  const results: StepResult[] = []
  for (const step of steps) {
    if (!step.method || !step.url) continue
    const headers = Object.fromEntries(
      Object.entries(step.headers ?? {}).map(([name, values]) => [name, substitute(values.join(', '), variables)]),
    )
    const url = substitute(step.url, variables).replaceAll(' ', '%20').replaceAll('"', '%22')
    const response = await fetch(url, {
      method: step.method,
      headers,
      body: step.body ? substitute(step.body, variables) : undefined,
    }).catch((error: unknown) => {
      throw new Error(`${step.note ?? ''}: ${step.method} ${url} failed`, { cause: error })
    })
    const text = await response.text()
    const json: unknown = text ? JSON.parse(text) : undefined
    const checks = (step.assertions ?? []).map((assertion) => {
      const description = `${assertion.source} ${assertion.property ?? ''} ${assertion.comparison} ${assertion.value ?? ''}`.replace(
        /\s+/g,
        ' ',
      )
      if (assertion.source === 'response_time')
        return { description, passed: true, skipped: 'timings are measured by benchmarks, not tests' }
      const actual = assertion.source === 'response_status' ? response.status : property(json, assertion.property ?? '')
      const expected = typeof assertion.value === 'string' ? substitute(assertion.value, variables) : assertion.value
      return { description, passed: compare(assertion.comparison, actual, expected) }
    })
    for (const variable of step.variables ?? []) {
      const value = property(json, variable.property)
      if (value !== undefined) variables.set(variable.name, String(value))
    }
    results.push({ note: step.note ?? `${step.method} ${step.url}`, status: response.status, checks })
  }
  return results
}
