export { openResources, type Resources, type ResourceOptions } from './resources.js'
export { buildServiceApp, type ServiceDefinition } from './service-app.js'
export { exitOnConfigurationError, serve } from './server.js'
