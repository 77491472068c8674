export * from './agent-fixture.ts';
export * from '../catalog/package-writer.fixture.ts';
export * from './memory-journal.ts';
export * from './event-watcher.ts';
