import { createOfflineAnalyzer } from './offline.js'
import { createOpenAiAnalyzer, type OpenAiOptions } from './openai.js'
import type { IncidentAnalyzer } from './types.js'

export { createOfflineAnalyzer } from './offline.js'
export { createOpenAiAnalyzer, type OpenAiOptions } from './openai.js'
export * from './types.js'

/** The model provider when one is configured, else the built-in offline analyzer. */
export function createAnalyzer(openai: OpenAiOptions | undefined): IncidentAnalyzer {
  return openai ? createOpenAiAnalyzer(openai) : createOfflineAnalyzer()
}
export { clippedOutput, MAX_TOOL_OUTPUT, runAgent, type AgentBounds, type AgentRun, type AgentStep, type AgentTool } from './agent-loop.js'
export { clip } from './openai.js'
