export { ingestEvents, prepareEvent, type EventOutcome, type IngestContext } from './ingest.js'
export {
  ANALYTICS_EVENTS,
  ANALYTICS_MAINTENANCE_QUEUE,
  createAnalyticsMaintenance,
  maintainAnalytics,
  type AnalyticsRetention,
} from './maintenance.js'
export { MAX_BATCH_BYTES, MAX_BATCH_EVENTS, MAX_PROPERTIES_BYTES, TrackMessage, problemOf } from './message.js'
export { REDACTED, redactProperties } from './privacy.js'
export { productEvents, trackProductEvent, type ProductEvent } from './product-events.js'
export { storeEvents, type AnalyticsEvent, type EventSource } from './store.js'
export { usageByEvent, usageSummary, type SummaryInterval, type UsageBucket } from './summary.js'
