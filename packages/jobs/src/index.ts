export {
  countJobs,
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
