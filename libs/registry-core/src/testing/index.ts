export { openExampleArchives, repack, type ExampleArchives } from './example-archives.ts';
