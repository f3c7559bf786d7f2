import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from '../teardown.js'

/** One request to the chat completions endpoint, as the server received it. */
export interface ChatRequest {
  authorization: string | undefined
  body: {
    model: string
    messages: Array<{
      role: string
      content: string | null
      tool_calls?: Array<{ id: string; function: { name: string } }>
      tool_call_id?: string
    }>
    tools?: Array<{ type: string; function: { name: string } }>
    response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: Record<string, unknown> } }
    max_tokens?: number
  }
}

/** What to answer: a JSON body (a completion by default), a raw text, a status, a delay. */
export interface ChatReply {
  status?: number
  body?: unknown
  raw?: string
  headers?: Record<string, string>
  delayMs?: number
}

export type Responder = (request: ChatRequest, index: number) => ChatReply | Promise<ChatReply>

export interface OpenAiTestServer {
  baseUrl: string
  requests: ChatRequest[]
}

let completionCount = 0

/** A chat completion in the wire shape of OpenAI's API: a text answer or tool calls. */
export function chatCompletion(
  message: { content?: string; toolCalls?: string[] },
  usage = { prompt_tokens: 100, completion_tokens: 20 },
  model = 'test-model',
) {
  completionCount += 1
  const toolCalls = message.toolCalls?.map((name, index) => ({
    id: `call_${completionCount}_${index}`,
    type: 'function',
    function: { name, arguments: '{}' },
  }))
  return {
    id: `chatcmpl-${completionCount}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: message.content ?? null, refusal: null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
        logprobs: null,
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  }
}

/**
 * A small OpenAI-compatible server on loopback (`POST /v1/chat/completions`) whose answers the
 * test scripts, so the real `openai` SDK is exercised over real HTTP: tool calls, structured
 * output, malformed replies, slow answers and rate limits.
 */
export async function startOpenAiServer(t: TestContext, respond: Responder): Promise<OpenAiTestServer> {
  const requests: ChatRequest[] = []
  const server = http.createServer((incoming, outgoing) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', async () => {
      if (incoming.method !== 'POST' || incoming.url !== '/v1/chat/completions') {
        outgoing
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }))
        return
      }
      const request: ChatRequest = {
        authorization: incoming.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'],
      }
      requests.push(request)
      const reply = await respond(request, requests.length - 1)
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs))
      if (outgoing.destroyed) return
      outgoing.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers })
      outgoing.end(reply.raw ?? JSON.stringify(reply.body ?? {}))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests }
}
