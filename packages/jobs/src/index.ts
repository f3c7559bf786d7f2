export { createJobQueue, ensureQueue, inTransaction, stopJobQueue, type JobQueue, type JobQueueOptions, type QueuePolicy } from './queue.js'
