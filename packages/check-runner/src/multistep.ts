import type { OutboundPolicy } from '@svc/outbound'
import { jsonPathValue, patternOf } from './assertions.js'
import { VARIABLE_REFERENCE, type ApiStep, type Extraction, type MultiStepRequest, type StepResult } from './definitions.js'
import { exchange, type Exchange } from './http.js'
import type { Observation } from './observation.js'

/**
 * A request with `fill` applied to its URL, header values and body: a step's variables put in
 * here, a check's secrets where it runs (plugins/synthetics secrets/resolve.ts).
 */
export function filledRequest<T extends Pick<ApiStep, 'url' | 'headers' | 'body'>>(request: T, fill: (text: string) => string): T {
  return {
    ...request,
    url: fill(request.url),
    ...(request.headers ? { headers: Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, fill(value)])) } : {}),
    ...(request.body !== undefined ? { body: fill(request.body) } : {}),
  }
}

/** A step's request with the variables of the steps before it put in (secrets were put in before the run). */
const filled = (step: ApiStep, variables: ReadonlyMap<string, string>): ApiStep =>
  filledRequest(step, (text) => text.replace(VARIABLE_REFERENCE, (reference, name: string) => variables.get(name) ?? reference))

/** The value an extraction takes from a response, or null when there is none. */
function extracted(extraction: Extraction, response: Exchange): string | null {
  switch (extraction.source) {
    case 'jsonPath':
      return jsonPathValue(response.body, extraction.property)
    case 'header': {
      const value = response.headers?.[extraction.property.toLowerCase()]
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
    }
    case 'body': {
      // RE2 (assertions.ts): the pattern is the check owner's, the body their target's.
      const match = patternOf(extraction.property).matcher(response.body ?? '')
      return match.find() ? match.group(1) : null
    }
  }
}

/** Why a step failed, in a line: its error, else its first assertion that did not hold. */
function failureOf(observation: Observation): string | undefined {
  if (observation.error !== undefined) return observation.error
  const failed = observation.assertions.find((outcome) => !outcome.passed)
  if (!failed) return undefined
  const subject = failed.property ? `${failed.source} ${failed.property}` : failed.source
  return `assertion failed: ${subject} ${failed.comparison}${failed.target !== undefined ? ` ${failed.target}` : ''} (was ${failed.actual ?? 'nothing'})`
}

/**
 * A multi-step API check (issue 59): its requests in order, each able to hand values (a token, an
 * id) to the ones after it. All steps share the check's timeout. The first step that fails (an
 * error, an assertion, a value it was to extract and did not find) ends the attempt, named in its
 * error: `step 2 "place order": HTTP 500`. Each step run keeps its own timings and outcome;
 * extracted values are kept by name only (they are often credentials).
 */
export async function runMultiStep(spec: MultiStepRequest, timeoutMs: number, policy: OutboundPolicy): Promise<Observation> {
  const deadline = performance.now() + timeoutMs
  const variables = new Map<string, string>()
  const steps: StepResult[] = []
  let total = 0
  for (const [index, step] of spec.steps.entries()) {
    const remaining = Math.max(1, Math.round(deadline - performance.now()))
    const response = await exchange(filled(step, variables), remaining, policy)
    const { observation } = response
    total += observation.timings.total
    let failure = failureOf(observation)
    const names: string[] = []
    for (const extraction of failure === undefined ? (step.extract ?? []) : []) {
      const value = extracted(extraction, response)
      if (value === null) {
        failure = `extracted nothing for ${extraction.variable} (${extraction.source} ${extraction.property})`
        break
      }
      variables.set(extraction.variable, value)
      names.push(extraction.variable)
    }
    steps.push({
      name: step.name,
      status: failure === undefined ? 'passing' : 'failing',
      ...(observation.statusCode !== undefined ? { statusCode: observation.statusCode } : {}),
      timings: observation.timings,
      assertions: observation.assertions,
      ...(failure !== undefined ? { error: failure.slice(0, 2000) } : {}),
      extracted: names,
    })
    if (failure !== undefined)
      return {
        timings: { total },
        ...(observation.statusCode !== undefined ? { statusCode: observation.statusCode } : {}),
        assertions: observation.assertions,
        error: `step ${index + 1} "${step.name}": ${failure}`,
        steps,
      }
  }
  const last = steps.at(-1)
  return { timings: { total }, ...(last?.statusCode !== undefined ? { statusCode: last.statusCode } : {}), assertions: [], steps }
}
