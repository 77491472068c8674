export * from './agent-fixture.ts';
