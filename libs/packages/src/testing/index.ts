export { FIXTURES, writeFixture, type FixtureName, type PackageFixture } from './package-fixtures.ts';
export { insertAfter, setBody, setJson, setKey, writeMutated, type Mutation } from './mutate.ts';
