export * from './pii-corpus.ts';
