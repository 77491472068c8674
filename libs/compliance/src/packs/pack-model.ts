import type { CompliancePackFile, PackControl } from '@agent-platform/contracts';

/** The id of the built-in pack whose controls are the platform controls other packs reference. */
export const PLATFORM_CONTROLS_PACK = 'platform-controls';

/** One evidence check of a loaded pack: its kind and its (validated) parameters. */
export interface PackCheck {
  kind: string;
  params: Record<string, unknown>;
}

/** A control as loaded: defaults filled, checks split into kind and parameters. */
export interface LoadedControl extends Omit<PackControl, 'evidence' | 'platform_controls' | 'attestation'> {
  platform_controls: string[];
  evidence: PackCheck[];
  attestation: 'required' | 'none';
}

/** A pack that passed every load check. */
export interface LoadedPack {
  meta: Omit<CompliancePackFile, 'controls' | 'format'>;
  controls: LoadedControl[];
  origin: 'built-in' | 'carrier';
  /** The file it was read from (base name). */
  file: string;
}

/** A pack file refused at load, with one line per fault (file, control and field named). */
export class PackLoadError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`compliance pack ${file} is invalid:\n  ${problems.join('\n  ')}`);
    this.name = 'PackLoadError';
  }
}
