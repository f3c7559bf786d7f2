export { inviteRoutes, type InviteOptions } from './invite.js'
export { productUserRoutes } from './routes.js'
