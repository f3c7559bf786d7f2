import type { FastifyPluginAsync } from 'fastify'
import type { TwilioConfig } from '@svc/config'
import type { ContactReader } from '../oncall/index.js'
import { ackLinkRoutes } from './ack-link-routes.js'
import { notificationRoutes } from './attempt-routes.js'
import type { Escalator } from './escalator.js'
import { incidentPagingRoutes } from './incident-paging-routes.js'
import { twilioRoutes, type SmsOptOut } from './twilio-routes.js'

export interface PagingModuleOptions {
  escalator: Escalator
  /** Without Twilio settings there is nothing to call back: its routes exist only with them. */
  twilio: TwilioConfig | undefined
  contacts: ContactReader
  smsOptOut?: SmsOptOut
}

/**
 * The paging module's sub-plugin: paging an incident's responders, the attempts of a page, the
 * acknowledgement links in pages and Twilio's SMS and voice callbacks. The escalator itself is
 * made and started by the root, which wires it to the modules it wakes.
 */
export const pagingModule: FastifyPluginAsync<PagingModuleOptions> = async (app, options) => {
  await app.register(incidentPagingRoutes, { escalator: options.escalator })
  await app.register(notificationRoutes)
  await app.register(ackLinkRoutes)
  if (options.twilio)
    await app.register(twilioRoutes, {
      twilio: options.twilio,
      contacts: options.contacts,
      ...(options.smsOptOut ? { smsOptOut: options.smsOptOut } : {}),
    })
}
