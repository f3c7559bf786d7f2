export { publish, subscribe } from './bus.js'
export type { AlertCreated, EventName, EventPayloads, IncidentReference } from './payloads.js'
