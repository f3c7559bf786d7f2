// The intake module's door: what the modules above it may use (docs/alerting.md).
export { type DeployEventRow, deploysBefore, deploysOfServicesBefore, findDeployEvent } from './deploys/queries.js'
export { deployBody, DeployEvent } from './deploys/schemas.js'
export { configUsingPolicy, storedRoutingRules } from './configs/queries.js'
export { type IngestLimits } from './limits.js'
export { intakeModule } from './plugin.js'
