export * from './log-buffer.ts';
export * from './logger.ts';
export * from './metrics.ts';
export * from './platform-instruments.ts';
export * from './tracing.ts';
