export * from './log-buffer.ts';
export * from './logger.ts';
export * from './metrics.ts';
