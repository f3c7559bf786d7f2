// The chat module's door: what the modules above it may use (docs/alerting.md).
export { chatAlertOf } from './delivery.js'
