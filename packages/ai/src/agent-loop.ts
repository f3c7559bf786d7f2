import OpenAI from 'openai'
import type { Static, TSchema } from 'typebox'
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions'
import { asAnalyzerError, asData, guardedCompletion, parseStructured, UNTRUSTED_DATA_RULE, type OpenAiOptions } from './openai.js'
import { AnalyzerError, unguarded, type SpendGuard, type TokenUsage } from './types.js'

/** One tool an agent may call: a read of the platform's data, answering JSON. */
export interface AgentTool {
  name: string
  description: string
  /** JSON Schema of the tool's input (an object). */
  parameters: Record<string, unknown>
  run(input: Record<string, unknown>): Promise<unknown>
}

/** What bounds one run: model rounds, tokens spent, wall time (and the budget, through the guard). */
export interface AgentBounds {
  maxSteps: number
  maxTokens: number
  deadline: number
}

/** One step of a run, as it is recorded (an analysis event): a tool called, or the answer given. */
export interface AgentStep {
  tool: string | null
  input: Record<string, unknown>
  output: unknown
  /** What the model said with the call (its reasoning text), when it said anything. */
  reasoning: string | null
}

export interface AgentRun<T> {
  answer: T
  usage: TokenUsage
}

/** A tool's answer, cut to this many characters of JSON before the model (and the record) sees it. */
export const MAX_TOOL_OUTPUT = 6_000

export function clippedOutput(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null'
  return text.length <= MAX_TOOL_OUTPUT ? text : `${text.slice(0, MAX_TOOL_OUTPUT)}… (cut at ${MAX_TOOL_OUTPUT} characters)`
}

function readInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}')
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/**
 * A bounded tool-calling loop over the OpenAI SDK (any OpenAI-compatible server): the model
 * calls tools until it answers in `schema` (strict structured output), or a bound stops it.
 * Each round reserves its most expensive case in the budget first and settles after. Every tool
 * call and the answer reach `onStep` as they happen, so a run can be read back step by step.
 * The subject reaches the model as delimited, untrusted data; so does every tool result.
 */
export async function runAgent<T extends TSchema>(
  options: OpenAiOptions,
  run: {
    name: string
    instructions: string
    subject: unknown
    tools: AgentTool[]
    schema: T
    bounds: AgentBounds
    guard?: SpendGuard
    onStep(step: AgentStep): Promise<void>
  },
): Promise<AgentRun<Static<T>>> {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries ?? 2,
  })
  const usage: TokenUsage = { provider: 'openai', model: options.model, promptTokens: 0, completionTokens: 0 }
  const guard = run.guard ?? unguarded
  // A Map: the tool name is the model's text, and `toString` must not be a tool.
  const byName = new Map(run.tools.map((tool) => [tool.name, tool]))
  const tools: ChatCompletionTool[] = run.tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }))
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: `${run.instructions} ${UNTRUSTED_DATA_RULE}` },
    { role: 'user', content: `Investigate this:\n${asData(run.subject)}` },
  ]
  try {
    for (let step = 0; step < run.bounds.maxSteps; step++) {
      if (Date.now() > run.bounds.deadline) throw new AnalyzerError('the investigation ran out of time', false)
      if (usage.promptTokens + usage.completionTokens >= run.bounds.maxTokens)
        throw new AnalyzerError(`the investigation spent its ${run.bounds.maxTokens} tokens`, false)
      // The last round may not call tools: it must answer.
      const lastRound = step === run.bounds.maxSteps - 1
      const completion = await guardedCompletion(client, guard, {
        model: options.model,
        messages,
        ...(lastRound ? {} : { tools }),
        max_tokens: options.maxOutputTokens ?? 1_200,
        response_format: {
          type: 'json_schema',
          json_schema: { name: run.name, strict: true, schema: run.schema as unknown as Record<string, unknown> },
        },
      })
      usage.promptTokens += completion.usage?.prompt_tokens ?? 0
      usage.completionTokens += completion.usage?.completion_tokens ?? 0
      if (completion.model) usage.model = completion.model
      const message = completion.choices?.[0]?.message
      if (!message) throw new AnalyzerError('the model answered with no choices', true)

      const calls = (message.tool_calls ?? []).filter((call) => call.type === 'function')
      if (calls.length === 0) {
        const answer = parseStructured(run.schema, message.content)
        await run.onStep({ tool: null, input: {}, output: answer, reasoning: null })
        return { answer, usage: { ...usage } }
      }
      messages.push({ role: 'assistant', content: message.content ?? null, tool_calls: calls })
      for (const call of calls) {
        const tool = byName.get(call.function.name)
        const input = readInput(call.function.arguments)
        const output = tool ? await tool.run(input) : { error: `unknown tool ${call.function.name}` }
        const content = clippedOutput(output)
        await run.onStep({ tool: call.function.name, input, output: content, reasoning: message.content ?? null })
        messages.push({ role: 'tool', tool_call_id: call.id, content })
      }
    }
    throw new AnalyzerError(`the model kept calling tools for ${run.bounds.maxSteps} rounds without answering`, true)
  } catch (error) {
    const failure = asAnalyzerError(error)
    failure.usage = { ...usage }
    throw failure
  }
}
