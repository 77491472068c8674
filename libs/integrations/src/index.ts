export { createIntegrationConnector, type ConnectorOptions } from './integration-connector.ts';
export { serverEnv, INTEGRATION_KEY_ENV } from './stdio-env.ts';
export { isPrivateAddress, checkUrlTarget, PrivateTargetError } from './private-target.ts';
export { guardedFetch } from './guarded-fetch.ts';
export { buildRequest } from './rest-adapter-connection.ts';
