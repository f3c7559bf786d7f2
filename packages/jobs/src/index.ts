export { createJobQueue, ensureQueue, stopJobQueue, type JobQueue, type JobQueueOptions, type QueuePolicy } from './queue.js'
