export { createIntegrationConnector, type ConnectorOptions } from './integration-connector.ts';
export { serverEnv, INTEGRATION_KEY_ENV } from './stdio-env.ts';
export { isPrivateAddress, checkUrlTarget, PrivateTargetError, guardedFetch } from '@agent-platform/net';
export { buildRequest } from './rest-adapter-connection.ts';
