export {
  countJobs,
  CREATE_QUEUE_STATEMENT,
  createJobQueue,
  ensureQueue,
  jobQueueProbe,
  inTransaction,
  stopJobQueue,
  type JobQueue,
  type JobQueueOptions,
  type QueuePolicy,
  workBatch,
  workEach,
  type WorkEachOptions,
} from './queue.js'
export { createPoller, type Poller, type PollerOptions } from './poller.js'
export {
  CENSUS_INTERVAL_MS,
  CENSUS_RESTING_INTERVAL_MS,
  censusOf,
  RESTING_POLL_SECONDS,
  wakeWorkersByCensus,
  type Census,
  type CensusOptions,
  type TableWatch,
} from './census.js'
