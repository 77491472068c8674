export { startFakeRegistry, type AddOptions, type FakeRegistry, type ReceivedRequest } from './fake-registry.ts';
export { EXAMPLES_DIR, exampleArchive, type ExampleChanges } from './example-archives.ts';
