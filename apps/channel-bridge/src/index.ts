export * from './service.ts';
export * from './compose.ts';
