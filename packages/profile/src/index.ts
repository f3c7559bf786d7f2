export { profileRoutes } from './routes.js'
export { PlatformRoleOrNone, UserProfile, UserProfilePatch } from './schemas.js'
export { isTimeZone } from './time-zones.js'
