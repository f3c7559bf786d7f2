// The intake module's door: what the modules above it may use (docs/alerting.md).
export { type DeployEventRow, deploysIn, deploysRelation, type DeployWindow, findDeployEvent, minutesBefore } from './deploys/queries.js'
export { deployBody, DeployEvent } from './deploys/schemas.js'
export { configUsingPolicy, routingOfConfigs, storedRoutingRules } from './configs/queries.js'
export { type IngestLimits } from './limits.js'
export { intakeModule } from './plugin.js'
export { createWriteOrder } from './write-order.js'
