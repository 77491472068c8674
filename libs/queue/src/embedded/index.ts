export { EmbeddedQueue, openEmbeddedQueue, type EmbeddedQueueOptions } from './embedded-queue.ts';
export type { FailedJob } from './job-table.ts';
