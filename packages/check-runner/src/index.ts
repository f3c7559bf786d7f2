export { assertionProblem, evaluate, patternOf } from './assertions.js'
export * from './definitions.js'
export { attempt, judge, runCheck } from './run.js'
export type { Observation } from './observation.js'
