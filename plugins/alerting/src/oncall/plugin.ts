import type { FastifyPluginAsync } from 'fastify'
import { subscribe, type MemberRemoved } from '@svc/events'
import { workEach } from '@svc/jobs'
import { forgetMember, MEMBER_REMOVED_QUEUE } from './forget-member.js'
import { escalationPolicyRoutes, type EscalationPolicyOptions } from './policies/routes.js'
import { calendarFeedRoutes } from './schedules/calendar-feed-routes.js'
import { scheduleRoutes } from './schedules/routes.js'
import { silenceRoutes, type SilenceOptions } from './silences/routes.js'
import { supportHoursRoutes } from './support-hours/routes.js'
import { backstageRoutes } from './services/backstage-routes.js'
import { dependencyRoutes } from './services/dependency-routes.js'
import { serviceRoutes, type ServiceRouteOptions } from './services/routes.js'
import { teamRoutes } from './teams/routes.js'

export interface OncallModuleOptions extends EscalationPolicyOptions, SilenceOptions, ServiceRouteOptions {
  /** Where calendar feeds link back to: the product API's public base URL. */
  productUrl: string
}

/**
 * The on-call module's sub-plugin: teams, the service catalog, schedules and their calendar feeds, escalation policies,
 * support hours and silences, and the worker that takes a removed member out of all of them.
 */
export const oncallModule: FastifyPluginAsync<OncallModuleOptions> = async (app, options) => {
  app.addHook('onReady', async () => {
    await subscribe(app.jobs, 'member.removed', MEMBER_REMOVED_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
    await workEach<MemberRemoved>(app.jobs, MEMBER_REMOVED_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, (job) =>
      forgetMember(app.database, job.data),
    )
  })
  app.addHook('onClose', () => app.jobs.offWork(MEMBER_REMOVED_QUEUE))
  await app.register(teamRoutes)
  await app.register(serviceRoutes, { serviceShowings: options.serviceShowings })
  await app.register(dependencyRoutes)
  await app.register(backstageRoutes)
  await app.register(scheduleRoutes)
  await app.register(calendarFeedRoutes, { productUrl: options.productUrl })
  await app.register(escalationPolicyRoutes, { destinations: options.destinations, references: options.references })
  await app.register(supportHoursRoutes)
  await app.register(silenceRoutes, { silenceEnded: options.silenceEnded })
}
