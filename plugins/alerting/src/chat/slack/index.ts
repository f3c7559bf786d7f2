import type { FastifyPluginAsync } from 'fastify'
import { type Escalator } from '../../paging/index.js'
import { createIncidentChatSync } from './incident-sync.js'
import { createSlackPeople } from './people.js'
import type { RenderDeps } from './render.js'
import { slackInteractivityRoutes } from './routes.js'

export interface ChatInteractivityOptions extends RenderDeps {
  escalator: Pick<Escalator, 'escalateNow'>
  /** SLACK_API_URL: a Slack-compatible Web API instead of Slack's (tests, gateways). */
  slackApiUrl: string | undefined
}

/**
 * Working incidents from Slack (decision 0020): the routes Slack's buttons and slash command
 * call, and the worker that keeps Slack's messages and incident channels in step with incidents.
 */
export const chatInteractivity: FastifyPluginAsync<ChatInteractivityOptions> = async (app, options) => {
  const people = createSlackPeople(app.database, options.slackApiUrl)
  const sync = createIncidentChatSync({
    database: app.database,
    jobs: app.jobs,
    people,
    latestAnalysis: options.latestAnalysis,
    productUrl: options.productUrl,
    slackApiUrl: options.slackApiUrl,
    log: app.log.child({ component: 'slack' }),
  })
  app.addHook('onReady', () => sync.start())
  app.addHook('onClose', () => sync.stop())
  await app.register(slackInteractivityRoutes, { ...options, people })
}
