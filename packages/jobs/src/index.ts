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
} from './queue.js'
