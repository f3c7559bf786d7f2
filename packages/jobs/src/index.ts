export { createJobQueue, stopJobQueue, type JobQueue, type JobQueueOptions } from './queue.js'
