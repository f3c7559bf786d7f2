import type { FastifyPluginAsync } from 'fastify'
import { DEFAULT_INVITATION_TTL_DAYS, DEFAULT_RETENTION_CONFIG, type BillingConfig } from '@svc/config'
import type { Notifier } from '@svc/notifier'
import { platformRoleRoutes } from './admin/platform-role-routes.js'
import { analyticsRoutes } from './analytics/routes.js'
import { auditLogRoutes } from './audit/routes.js'
import { profileRoutes } from '@svc/profile'
import { activityRoutes } from './identity/activity-routes.js'
import { usersRoutes } from './identity/users-routes.js'
import { invitationRoutes } from './invitations/routes.js'
import { memberRoutes } from './members/routes.js'
import { organizationRoutes } from './organizations/routes.js'
import { subscriptionRoutes } from './organizations/subscription-routes.js'
import { SCIM_BASE_PATH } from '@svc/auth'
import { scimGroupBindingRoutes } from './scim-groups/routes.js'
import { scimSurface } from './scim/index.js'
import { billingOf } from '@svc/billing'
import { billingRoutes } from './billing/routes.js'
import { billingWebhookRoutes } from './billing/webhook-routes.js'
import { checkListRoutes, type CheckLister } from './organizations/check-routes.js'
import { statusPageListRoutes, type StatusPageLister } from './organizations/status-page-routes.js'
export { scimRouterError } from './scim/index.js'
export type { StatusPageLister } from './organizations/status-page-routes.js'
export type { CheckLister } from './organizations/check-routes.js'
import { createReportGenerator } from './reports/generator.js'
import { createReportRetention } from './reports/retention.js'
import { reportFileRoutes } from './reports/file-routes.js'
import { reportRoutes } from './reports/routes.js'
import type { ReportSources } from './reports/sources.js'
export type { ReportSources } from './reports/sources.js'
export { REPORT_QUEUE } from './reports/generator.js'
export { REPORT_RETENTION_QUEUE } from './reports/retention.js'
import { scimTokenRoutes } from './scim-tokens/routes.js'
import { apiTokenRoutes } from './api-tokens/routes.js'
import { ssoRoutes } from './sso/routes.js'

/** The platform surface: identity, organizations and members, audit log and reports, billing, platform roles, SCIM tokens and the SCIM server, SSO/SAML. */
export interface PlatformOptions {
  /** The status page surface's read of an organization's pages. */
  statusPages: StatusPageLister
  /** The synthetics surface's read of an organization's checks. */
  checks: CheckLister
  /** STRIPE_* settings; unset, billing is off. */
  billing?: BillingConfig
  /** Outbound e-mail (payment failures to owners), queued in the outbox. */
  notifier: Notifier
  /** The web application's address (APP_URL), linked from e-mails. */
  appUrl?: string
  /** What reports read of the product surfaces, through their read modules. */
  reportSources: ReportSources
  /** REPORTS_SIGNING_KEY: signs report download links; unset, downloads answer 503 REPORTS_DISABLED. */
  reportsSigningKey?: string
  /** Reports older than this many days are deleted; unset: kept until a person deletes them. */
  reportsRetentionDays?: number
  /** ANALYTICS_RETENTION_DAYS: events older than this are refused as they arrive. */
  analyticsRetentionDays?: number
  /** INVITATION_TTL_DAYS; unset: DEFAULT_INVITATION_TTL_DAYS. */
  invitationTtlDays?: number
  /** ORGANIZATIONS_PER_USER: organizations one person may have created; unset: DEFAULT_ORGANIZATIONS_PER_USER. */
  organizationsPerUser?: number
}

export const DEFAULT_ORGANIZATIONS_PER_USER = 10

export const platformSurface: FastifyPluginAsync<PlatformOptions> = async (app, options) => {
  await app.register(profileRoutes)
  await app.register(usersRoutes)
  await app.register(organizationRoutes, {
    billingEnabled: options.billing !== undefined,
    organizationsPerUser: options.organizationsPerUser ?? DEFAULT_ORGANIZATIONS_PER_USER,
  })
  const invitations = { notifier: options.notifier, ttlDays: options.invitationTtlDays ?? DEFAULT_INVITATION_TTL_DAYS }
  await app.register(memberRoutes, invitations)
  await app.register(invitationRoutes, invitations)
  await app.register(activityRoutes)
  await app.register(subscriptionRoutes)
  await app.register(auditLogRoutes)
  await app.register(analyticsRoutes, { retentionDays: options.analyticsRetentionDays ?? DEFAULT_RETENTION_CONFIG.analyticsEvents })
  await app.register(statusPageListRoutes, { statusPages: options.statusPages })
  await app.register(checkListRoutes, { checks: options.checks })
  const billing = await billingOf(options.billing)
  await app.register(billingRoutes, { billing })
  await app.register(billingWebhookRoutes, { billing, notifier: options.notifier, appUrl: options.appUrl })
  const reportJobs = { database: app.database, jobs: app.jobs, log: app.log.child({ component: 'reports' }) }
  const reports = createReportGenerator({ ...reportJobs, sources: options.reportSources })
  const retention = createReportRetention({ ...reportJobs, retentionDays: options.reportsRetentionDays })
  app.addHook('onReady', async () => {
    await reports.start()
    await retention.start()
  })
  await app.register(reportRoutes, { generator: reports, signingKey: options.reportsSigningKey })
  await app.register(reportFileRoutes, { signingKey: options.reportsSigningKey })
  await app.register(platformRoleRoutes)
  await app.register(scimTokenRoutes)
  await app.register(apiTokenRoutes)
  await app.register(scimGroupBindingRoutes)
  await app.register(ssoRoutes)
  await app.register(scimSurface, { prefix: SCIM_BASE_PATH })
}
