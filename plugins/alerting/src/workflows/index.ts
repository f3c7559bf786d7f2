// The workflows module's door: what the alerting root uses (docs/alerting.md).
export { workflowsModule } from './plugin.js'
export { type AnalysisStart, type AnalysisStarter, createWorkflowRunner, type RcaOpener } from './runner.js'
export { workflowSubscriber } from './subscriber.js'
