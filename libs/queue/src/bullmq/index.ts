export { BullmqQueue, connectBullmqQueue } from './bullmq-queue.ts';
export type { BullmqQueueOptions } from './bullmq-queue.ts';
export type { FailedJob } from '../embedded/job-table.ts';
