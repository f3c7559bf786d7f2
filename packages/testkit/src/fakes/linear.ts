import { createHmac, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from '../teardown.js'

/** An issue as the server keeps it. */
export interface LinearIssue {
  id: string
  identifier: string
  teamId: string
  title: string
  description: string | null
  state: { id: string; name: string; type: 'unstarted' | 'started' | 'completed' | 'canceled' }
}

export interface LinearTestServer {
  /** The GraphQL endpoint (`https://api.linear.app/graphql` in production). */
  apiUrl: string
  apiKey: string
  teamId: string
  issues: LinearIssue[]
  /** The webhook for issue changes, as created in Linear's settings, with its signing secret. */
  registerWebhook(url: string, secret: string): void
  /** Moves an issue to a state as a person in Linear would; Linear sends its signed `Issue` update. Answers our status code. */
  moveTo(identifier: string, name: string, type: LinearIssue['state']['type']): Promise<number>
}

function reply(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

async function jsonOf(request: IncomingMessage): Promise<{ query?: string; variables?: Record<string, unknown> }> {
  let text = ''
  for await (const chunk of request) text += String(chunk)
  return JSON.parse(text) as { query?: string; variables?: Record<string, unknown> }
}

const states = {
  todo: { id: randomUUID(), name: 'Todo', type: 'unstarted' as const },
}

/**
 * A server on loopback that speaks the part of Linear's GraphQL API the service uses through
 * `@linear/sdk` (the `createIssue` mutation and the `issue` and `workflowState` queries the SDK
 * sends after it; the API key in `Authorization`; GraphQL errors as Linear words them), and sends
 * issue changes to a webhook signed as Linear signs them (`Linear-Signature`: the hex HMAC-SHA256
 * of the body, `webhookTimestamp` in it). The operation is told by its name in the SDK's document.
 */
export async function startLinearServer(t: TestContext): Promise<LinearTestServer> {
  const apiKey = 'lin_api_test0123456789'
  const teamId = randomUUID()
  const issues: LinearIssue[] = []
  const workflowStates = new Map<string, LinearIssue['state']>([[states.todo.id, states.todo]])
  let webhook: { url: string; secret: string } | undefined
  const base = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const issueData = (issue: LinearIssue) => ({
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    description: issue.description,
    url: `https://linear.app/acme/issue/${issue.identifier}`,
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
    number: Number(issue.identifier.split('-')[1]),
    priority: 0,
    reactions: [],
    sharedAccess: { isShared: false, sharedWithCount: 0, viewerHasOnlySharedAccess: false, disallowedIssueFields: [], sharedWithUsers: [] },
    labelIds: [],
    previousIdentifiers: [],
    state: { id: issue.state.id },
    team: { id: issue.teamId },
  })

  const server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'POST' || new URL(request.url ?? '/', base()).pathname !== '/graphql')
        return reply(response, 404, { errors: [{ message: 'Not found' }] })
      if (request.headers.authorization !== apiKey)
        return reply(response, 400, {
          errors: [{ message: 'Authentication required, not authenticated', extensions: { type: 'authentication error' } }],
        })
      const { query = '', variables = {} } = await jsonOf(request)
      if (/mutation createIssue\(/.test(query)) {
        const input = variables.input as { teamId?: string; title?: string; description?: string }
        if (input.teamId !== teamId) return reply(response, 200, { data: null, errors: [{ message: 'Entity not found: Team' }] })
        const issue: LinearIssue = {
          id: randomUUID(),
          identifier: `SEC-${issues.length + 1}`,
          teamId,
          title: input.title ?? '',
          description: input.description ?? null,
          state: states.todo,
        }
        issues.push(issue)
        return reply(response, 200, { data: { issueCreate: { success: true, lastSyncId: issues.length, issue: { id: issue.id } } } })
      }
      if (/query issue\(/.test(query)) {
        const issue = issues.find((candidate) => candidate.id === variables.id || candidate.identifier === variables.id)
        return issue
          ? reply(response, 200, { data: { issue: issueData(issue) } })
          : reply(response, 200, { data: null, errors: [{ message: 'Entity not found: Issue' }] })
      }
      if (/query workflowState\(/.test(query)) {
        const state = workflowStates.get(String(variables.id))
        return state
          ? reply(response, 200, {
              data: {
                workflowState: {
                  ...state,
                  color: '#bec2c8',
                  position: 0,
                  createdAt: new Date().toISOString(),
                  updatedAt: new Date().toISOString(),
                  team: { id: teamId },
                },
              },
            })
          : reply(response, 200, { data: null, errors: [{ message: 'Entity not found: WorkflowState' }] })
      }
      return reply(response, 400, { errors: [{ message: 'Unknown operation' }] })
    })().catch((error: unknown) => reply(response, 500, { errors: [{ message: String(error) }] }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))

  return {
    apiUrl: `${base()}/graphql`,
    apiKey,
    teamId,
    issues,
    registerWebhook(url, secret) {
      webhook = { url, secret }
    },
    async moveTo(identifier, name, type) {
      const issue = issues.find((candidate) => candidate.identifier === identifier)
      if (!issue) throw new Error(`no issue ${identifier}`)
      if (!webhook) throw new Error('no webhook registered')
      issue.state = { id: randomUUID(), name, type }
      workflowStates.set(issue.state.id, issue.state)
      const body = JSON.stringify({
        action: 'update',
        type: 'Issue',
        createdAt: new Date().toISOString(),
        organizationId: randomUUID(),
        url: `https://linear.app/acme/issue/${issue.identifier}`,
        webhookTimestamp: Date.now(),
        webhookId: randomUUID(),
        data: { id: issue.id, identifier: issue.identifier, title: issue.title, state: issue.state, teamId },
        updatedFrom: { stateId: states.todo.id },
      })
      const answer = await fetch(webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'linear-signature': createHmac('sha256', webhook.secret).update(body).digest('hex'),
          'linear-delivery': randomUUID(),
          'linear-event': 'Issue',
        },
        body,
      })
      return answer.status
    },
  }
}
