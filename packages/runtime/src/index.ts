export { openResources, type Resources, type ResourceOptions } from './resources.js'
export { buildServiceApp, type ServiceDefinition } from './service-app.js'
export { createDailyMaintenance } from './storage-maintenance.js'
export { exitOnConfigurationError, serve } from './server.js'
