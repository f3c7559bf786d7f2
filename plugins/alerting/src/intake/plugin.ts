import type { FastifyPluginAsync } from 'fastify'
import { subscribe, type CheckStateChanged } from '@svc/events'
import { workEach } from '@svc/jobs'
import { CHECK_FAILED_QUEUE, CHECK_RECOVERED_QUEUE, onCheckFailed, onCheckRecovered } from './checks.js'
import { webhookConfigRoutes } from './configs/routes.js'
import { deployEventRoutes } from './deploys/routes.js'
import { ingestionRoutes, type IngestionOptions } from './routes.js'

/**
 * The intake module's sub-plugin: webhook configurations, ingestion in every format, deploy
 * events, and the workers that turn a failing check into an alert and its recovery into a resolve.
 */
export const intakeModule: FastifyPluginAsync<IngestionOptions> = async (app, options) => {
  app.addHook('onReady', async () => {
    await subscribe(app.jobs, 'check.failed', CHECK_FAILED_QUEUE, { retryLimit: 5, retryDelay: 2, retryBackoff: true })
    await subscribe(app.jobs, 'check.recovered', CHECK_RECOVERED_QUEUE, { retryLimit: 5, retryDelay: 2, retryBackoff: true })
    await workEach<CheckStateChanged>(app.jobs, CHECK_FAILED_QUEUE, { batchSize: 20, pollingIntervalSeconds: 1 }, async (job) => {
      if (await onCheckFailed(app.database, app.jobs, options.interest, job.data)) {
        options.wake.escalator()
        options.wake.dispatcher()
      }
    })
    await workEach<CheckStateChanged>(app.jobs, CHECK_RECOVERED_QUEUE, { batchSize: 20, pollingIntervalSeconds: 1 }, (job) =>
      onCheckRecovered(app.database, job.data),
    )
  })
  app.addHook('onClose', async () => {
    await app.jobs.offWork(CHECK_FAILED_QUEUE)
    await app.jobs.offWork(CHECK_RECOVERED_QUEUE)
  })
  await app.register(webhookConfigRoutes)
  await app.register(ingestionRoutes, options)
  await app.register(deployEventRoutes)
}
