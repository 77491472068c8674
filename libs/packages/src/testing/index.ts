export { FIXTURES, writeFixture, type FixtureName, type PackageFixture } from './package-fixtures.ts';
export { insertAfter, setBody, setJson, setKey, writeMutated, type Mutation } from './mutate.ts';
export {
  concat,
  END_OF_ARCHIVE,
  gnuLongName,
  gzipBomb,
  gzTar,
  hostileArchives,
  paxEntry,
  rawEntry,
  rawHeader,
  validPackageEntries,
  type HostileArchive,
  type RawHeader,
} from './hostile-archives.ts';
