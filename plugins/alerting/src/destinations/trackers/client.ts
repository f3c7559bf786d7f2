import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import type { LinearClientOptions } from '@linear/sdk'
import { Agent } from 'undici'
import { guardedLookup, type OutboundPolicy } from '@svc/outbound'
import { withoutTrailingSlashes } from './paths.js'

// Tickets in the trackers an organization connects, through their official SDKs: jira.js for
// Jira Cloud's REST API (v3), @linear/sdk for Linear's GraphQL API. Connections are checked
// against the private-target rule when they are made, as outbound webhooks' are. The SDKs are
// imported when a ticket is first made: jira.js (with axios) and Linear's load several hundred
// modules, half a second of every process's start (each test file's among them) that most never
// use.

/** A ticket as the tracker keeps it. */
export interface Ticket {
  id: string
  key: string
  url: string
  status: string | null
}

/** What a tracker answered that did not create the ticket: kept on the follow-up, tried again. */
export class TrackerFailure extends Error {}

export interface TrackerAccount {
  kind: 'jira' | 'linear'
  /** Jira: the site, e.g. https://acme.atlassian.net. Linear: its GraphQL endpoint when not the default. */
  siteUrl: string | null
  /** Jira: the account the API token belongs to. */
  accountEmail: string | null
  /** Jira: a project key. Linear: a team id. */
  project: string
  /** Jira: the issue type, e.g. Task. */
  issueType: string | null
  /** Jira: the API token. Linear: the API key. */
  credential: string
}

/** A Jira description: Atlassian Document Format, one paragraph per line. */
function documentOf(text: string) {
  return {
    type: 'doc',
    version: 1,
    content: text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => ({ type: 'paragraph', content: [{ type: 'text', text: line }] })),
  }
}

const reason = (error: unknown) => {
  const answer = error as { response?: { status?: number; data?: unknown }; message?: string }
  if (answer.response?.status)
    return `the tracker answered ${answer.response.status}: ${JSON.stringify(answer.response.data ?? '').slice(0, 300)}`
  return (error as Error).message ?? String(error)
}

export function createTrackerClient(policy: OutboundPolicy) {
  const lookup = guardedLookup(policy)
  const agents = { httpAgent: new HttpAgent({ lookup } as never), httpsAgent: new HttpsAgent({ lookup } as never) }
  const dispatcher = new Agent({ connect: { lookup }, headersTimeout: 10_000, bodyTimeout: 10_000, connectTimeout: 5_000 })

  async function createInJira(account: TrackerAccount, title: string, description: string): Promise<Ticket> {
    const host = withoutTrailingSlashes(account.siteUrl!)
    const { Version3Client } = await import('jira.js')
    const jira = new Version3Client({
      host,
      authentication: { basic: { email: account.accountEmail!, apiToken: account.credential } },
      baseRequestConfig: { ...agents, timeout: 10_000 },
    })
    const created = await jira.issues.createIssue({
      fields: {
        project: { key: account.project },
        issuetype: { name: account.issueType ?? 'Task' },
        summary: title,
        description: documentOf(description) as never,
      },
    })
    const issue = await jira.issues.getIssue({ issueIdOrKey: created.key, fields: ['status'] })
    const status = (issue.fields as { status?: { name?: string } }).status?.name ?? null
    return { id: created.id, key: created.key, url: `${host}/browse/${created.key}`, status }
  }

  async function createInLinear(account: TrackerAccount, title: string, description: string): Promise<Ticket> {
    const { LinearClient } = await import('@linear/sdk')
    const linear = new LinearClient({
      apiKey: account.credential,
      ...(account.siteUrl ? { apiUrl: account.siteUrl } : {}),
      dispatcher,
    } as LinearClientOptions)
    const payload = await linear.createIssue({ teamId: account.project, title, description })
    const issue = await payload.issue
    if (!payload.success || !issue) throw new TrackerFailure('Linear did not create the issue')
    const state = await issue.state
    return { id: issue.id, key: issue.identifier, url: issue.url, status: state?.name ?? null }
  }

  return {
    /** Creates the ticket; a TrackerFailure says why the tracker did not. */
    async createTicket(account: TrackerAccount, ticket: { title: string; description: string }): Promise<Ticket> {
      try {
        return account.kind === 'jira'
          ? await createInJira(account, ticket.title, ticket.description)
          : await createInLinear(account, ticket.title, ticket.description)
      } catch (error) {
        if (error instanceof TrackerFailure) throw error
        throw new TrackerFailure(reason(error))
      }
    },
    close: () => dispatcher.close(),
  }
}

export type TrackerClient = ReturnType<typeof createTrackerClient>
