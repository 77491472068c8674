export {
  startOidcProvider,
  type HarnessClient,
  type HarnessPublicClient,
  type HarnessUser,
  type OidcProviderHarness,
} from './oidc-provider-harness.ts';
export { startAttackerKeyServer, type AttackerKeyServer } from './attacker-key-server.ts';
export { tokenForger } from './forged-tokens.ts';
