export * from './channel-kind.ts';
