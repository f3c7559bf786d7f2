import type { FastifyPluginAsync } from 'fastify'
import { subscribe, type AnalysisCompleted } from '@svc/events'
import { workEach } from '@svc/jobs'
import type { ChatSender } from '../destinations/index.js'
import { ANALYSIS_COMPLETED_QUEUE, postCompletedAnalysis } from './analysis-follow-up.js'
import { chatInteractivity, type ChatInteractivityOptions } from './slack/index.js'

export interface ChatModuleOptions extends ChatInteractivityOptions {
  sender: ChatSender
}

/**
 * The chat module's sub-plugin: Slack's buttons and slash command, incident channels kept in step,
 * and the worker that posts a finished analysis under the page it is about.
 */
export const chatModule: FastifyPluginAsync<ChatModuleOptions> = async (app, options) => {
  app.addHook('onReady', async () => {
    await subscribe(app.jobs, 'analysis.completed', ANALYSIS_COMPLETED_QUEUE, { retryLimit: 3, retryDelay: 5, retryBackoff: true })
    const followUp = {
      database: app.database,
      sender: options.sender,
      latestAnalysis: options.latestAnalysis,
      productUrl: options.productUrl,
      log: app.log.child({ component: 'chat' }),
    }
    await workEach<AnalysisCompleted>(app.jobs, ANALYSIS_COMPLETED_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, (job) =>
      postCompletedAnalysis(followUp, job.data),
    )
  })
  app.addHook('onClose', () => app.jobs.offWork(ANALYSIS_COMPLETED_QUEUE))
  await app.register(chatInteractivity, {
    escalator: options.escalator,
    latestAnalysis: options.latestAnalysis,
    productUrl: options.productUrl,
    slackApiUrl: options.slackApiUrl,
  })
}
