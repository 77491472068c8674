export * from './test-servers.ts';
