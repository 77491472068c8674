export { startTestApi, type DeepPartial, type StartTestApiOptions, type TestApi } from './test-api.ts';
export type { TestRequestOptions, TestResponse } from './test-request.ts';
export { toTomlText } from './toml-text.ts';
export { startRevocationFeedServer, type RevocationFeedServer } from './revocation-feed-server.ts';
