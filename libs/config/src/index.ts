export { ConfigError } from './config-error.ts';
export {
  CONFIG_ENV,
  DEFAULT_CONFIG_FILE,
  loadConfig,
  locateConfigFile,
  parseConfigText,
  readConfigFile,
  type ConfigLocation,
  type ConfigLookup,
  type ConfigSource,
  type LoadedConfig,
} from './load-config.ts';
export { defaultConfig, validateConfig } from './validate-config.ts';
export { bootGateForReload, checkBootGate, type BootGateResult } from './boot-gate.ts';
export { checkRegistryBootGate } from './registry-boot-gate.ts';
export { isIpOrCidr, isLocalListen, isLoopbackHost, parseListenAddress, readListenAddress, type ListenAddress } from './listen-address.ts';
export { isSecretKeyName, redactConfigText, redactUrlPasswords, REDACTED } from './redact.ts';
export {
  changedKeys,
  createConfigHolder,
  RESTART_REQUIRED_KEYS,
  type ConfigChange,
  type ConfigChangeListener,
  type ConfigGuard,
  type ConfigHolder,
} from './config-holder.ts';
export {
  DEV_LICENCE_FILES,
  FIRST_RUN_DATA_DIR,
  firstRunConfigText,
  loadOrCreateConfig,
  runFirstRunSetup,
  type FirstRunOptions,
} from './first-run.ts';
export { createDevLicenceClaims, generateLicenceKeyPair, issueLicence, LICENCE_ALG } from './licence-keys.ts';
export { decodeVaultKey, loadVaultKey, VAULT_KEY_BYTES, VAULT_KEY_FILE } from './vault-key.ts';
export { renderConfigReference } from './config-reference.ts';
export { loadLicence, type LicenceLog } from './licence-loader.ts';
export {
  agreeWithFleetAtBoot,
  licenceClaim,
  signingKeyClaim,
  vaultKeyClaim,
  type FleetBootCheckOptions,
} from './fleet-boot-check.ts';
