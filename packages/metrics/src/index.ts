export { requestMetricsPlugin } from './http.js'
export {
  analysesFinished,
  dispatchWaits,
  httpRequestDuration,
  ingestedEvents,
  jobQueueErrors,
  outboxDeliveries,
  registry,
  trackJobQueue,
  type JobCount,
} from './registry.js'
export { startMetricsServer } from './server.js'
