export * from './registry-app.ts';
export * from './service.ts';
export * from './compose.ts';
