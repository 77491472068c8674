export { abaRoutingValid, ibanValid, luhnValid } from './checksums.ts';
export { compileCarrierPattern } from './detectors/carrier-numbers.ts';
export { isCardNumber } from './detectors/payment-card.ts';
export { createPiiDetector, type PiiDetector, type PiiDetectorOptions } from './pii-detector.ts';
export type { Detector, PiiSpan, TextSpan } from './span.ts';
export {
  createTokenVault,
  TOKEN_LABELS,
  type CategoryCounts,
  type StreamHydrator,
  type TokenVault,
  type TokenVaultOptions,
  type VaultCounts,
} from './token-vault.ts';
