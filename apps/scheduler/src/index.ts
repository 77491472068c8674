export * from './service.ts';
export * from './compose.ts';
export { fireHandler, fireKey, isRetryableFire, SCHEDULER_CALLER, type FireHandlerDeps, type FireRetry } from './handlers/fire-handler.ts';
export { NO_SCHEDULE_METRICS, scheduleMetrics, type ScheduleMetrics } from './schedule-metrics.ts';
