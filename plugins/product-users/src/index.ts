export { inviteRoutes, type InviteOptions } from './invite.js'
export { productUserRoutes } from './routes.js'
export { notificationPreferencesOf } from './reads.js'
export type { NotificationPreferences } from './preferences.js'
