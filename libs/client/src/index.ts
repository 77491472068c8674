export {
  API_VERSION,
  createPlatformClient,
  unwrap,
  type CallResult,
  type DataOf,
  type PlatformClient,
  type PlatformClientOptions,
} from './client.ts';
export {
  PlatformApiError,
  asErrorEnvelope,
  asFlatError,
  type ErrorEnvelope,
  type FlatError,
  type PlatformErrorBody,
} from './errors.ts';
export type { components, operations, paths } from './generated/api.ts';
