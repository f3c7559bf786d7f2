import { createHmac } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from '../teardown.js'

/** An issue as the server keeps it. */
export interface JiraIssue {
  id: string
  key: string
  project: string
  summary: string
  issueType: string
  /** The Atlassian Document Format body, as sent. */
  description: unknown
  status: { name: string; category: 'new' | 'indeterminate' | 'done' }
}

export interface JiraTestServer {
  /** The site URL (`https://acme.atlassian.net` in production). */
  url: string
  email: string
  apiToken: string
  issues: JiraIssue[]
  /** While true, every request answers 503, as a Jira that is down. */
  down: boolean
  /** The admin webhook for issue updates, as registered in Jira's settings with its secret. */
  registerWebhook(url: string, secret: string): void
  /** Moves an issue to a status as a person in Jira would; Jira sends its signed `jira:issue_updated`. Answers our status code. */
  transition(key: string, status: string, category: JiraIssue['status']['category']): Promise<number>
}

function reply(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

async function jsonOf(request: IncomingMessage): Promise<Record<string, unknown>> {
  let text = ''
  for await (const chunk of request) text += String(chunk)
  return text ? (JSON.parse(text) as Record<string, unknown>) : {}
}

const categoryKeys = { new: 'new', indeterminate: 'indeterminate', done: 'done' }

/**
 * A server on loopback that speaks the part of Jira Cloud's REST API v3 the service uses (create
 * an issue, read its status; HTTP Basic with an account's e-mail and API token; Jira's error
 * bodies), and sends issue updates to a registered admin webhook signed as Jira Cloud signs them
 * (`X-Hub-Signature: sha256=<HMAC-SHA256 of the body>`), so the real `jira.js` SDK and the
 * service's webhook are driven over real sockets.
 */
export async function startJiraServer(t: TestContext): Promise<JiraTestServer> {
  const email = 'automation@acme.example'
  const apiToken = 'ATATT3xFfGF0-test-token'
  const expectedAuth = `Basic ${Buffer.from(`${email}:${apiToken}`).toString('base64')}`
  const issues: JiraIssue[] = []
  let webhook: { url: string; secret: string } | undefined
  const state = { down: false }
  const issueBody = (issue: JiraIssue, base: string) => ({
    id: issue.id,
    key: issue.key,
    self: `${base}/rest/api/3/issue/${issue.id}`,
    fields: {
      summary: issue.summary,
      issuetype: { name: issue.issueType },
      project: { key: issue.project },
      status: { name: issue.status.name, statusCategory: { key: categoryKeys[issue.status.category] } },
    },
  })

  const server = createServer((request, response) => {
    void (async () => {
      if (state.down) return reply(response, 503, { errorMessages: ['Service unavailable'] })
      if (request.headers.authorization !== expectedAuth) return reply(response, 401, { errorMessages: ['Client must be authenticated'] })
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const path = new URL(request.url ?? '/', base).pathname
      if (request.method === 'POST' && path === '/rest/api/3/issue') {
        const { fields } = (await jsonOf(request)) as {
          fields?: { project?: { key?: string }; summary?: string; issuetype?: { name?: string }; description?: unknown }
        }
        if (!fields?.project?.key || !fields.summary || !fields.issuetype?.name)
          return reply(response, 400, { errorMessages: [], errors: { summary: 'You must specify a summary of the issue.' } })
        const number = issues.filter((issue) => issue.project === fields.project!.key).length + 1
        const issue: JiraIssue = {
          id: String(10_000 + issues.length + 1),
          key: `${fields.project.key}-${number}`,
          project: fields.project.key,
          summary: fields.summary,
          issueType: fields.issuetype.name,
          description: fields.description,
          status: { name: 'To Do', category: 'new' },
        }
        issues.push(issue)
        return reply(response, 201, { id: issue.id, key: issue.key, self: `${base}/rest/api/3/issue/${issue.id}` })
      }
      const read = /^\/rest\/api\/3\/issue\/([^/]+)$/.exec(path)
      if (request.method === 'GET' && read) {
        const issue = issues.find((candidate) => candidate.key === read[1] || candidate.id === read[1])
        if (!issue) return reply(response, 404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'] })
        return reply(response, 200, issueBody(issue, base))
      }
      return reply(response, 404, { errorMessages: ['Not found'] })
    })().catch((error: unknown) => reply(response, 500, { errorMessages: [String(error)] }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    url,
    email,
    apiToken,
    issues,
    get down() {
      return state.down
    },
    set down(value: boolean) {
      state.down = value
    },
    registerWebhook(target, secret) {
      webhook = { url: target, secret }
    },
    async transition(key, status, category) {
      const issue = issues.find((candidate) => candidate.key === key)
      if (!issue) throw new Error(`no issue ${key}`)
      if (!webhook) throw new Error('no webhook registered')
      const from = issue.status.name
      issue.status = { name: status, category }
      const body = JSON.stringify({
        timestamp: Date.now(),
        webhookEvent: 'jira:issue_updated',
        issue_event_type_name: 'issue_generic',
        issue: issueBody(issue, url),
        changelog: { id: String(Date.now()), items: [{ field: 'status', fieldtype: 'jira', fromString: from, toString: status }] },
      })
      const signature = `sha256=${createHmac('sha256', webhook.secret).update(body).digest('hex')}`
      const answer = await fetch(webhook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature': signature, 'x-atlassian-webhook-identifier': String(Date.now()) },
        body,
      })
      return answer.status
    },
  }
}
