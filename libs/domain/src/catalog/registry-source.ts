import type {
  RegistryCollection,
  RegistryPackage,
  RegistrySearchQuery,
  RegistrySearchResult,
  RegistryVersion,
} from '@agent-platform/contracts';

/**
 * The package registry as the catalog sees it (DECISIONS D5; docs/catalog.md "Installing by
 * name"): the reads install by name, collections and search need. The adapter
 * (`@agent-platform/registry-core` `createHttpRegistryClient`) speaks the registry's HTTP wire
 * format; the domain never sees fetch, URLs or headers.
 *
 * A name or version the registry does not know is `null`. A registry that cannot be reached, does
 * not answer within `[catalog] request_timeout_ms`, fails (5xx) or refuses the caller throws an
 * error of category `ProviderError` (502: spec §Errors "upstream provider or registry error").
 */
export interface RegistrySource {
  /** The registry's base URL, for messages. */
  readonly url: string;
  /** The package view: its dist-tags and deprecation (docs/registry.md "Dist-tags", "Deprecation"). */
  package(name: string): Promise<RegistryPackage | null>;
  /** Every version, highest first, yanked ones included (`yanked: true`). */
  versions(name: string): Promise<RegistryVersion[] | null>;
  version(name: string, version: string): Promise<RegistryVersion | null>;
  /** The archive bytes of one version (a yanked one too: it stays downloadable by exact version). */
  download(name: string, version: string): Promise<Uint8Array | null>;
  search(query: RegistrySearchQuery): Promise<RegistrySearchResult>;
  collection(name: string): Promise<RegistryCollection | null>;
}

/** What a registry signature covers (docs/registry.md "Signatures"). */
export interface SignedFields {
  name: string;
  version: string;
  /** `sha256:<hex>` of the archive bytes. */
  archive_sha256: string;
  /** `[signing] content_hash` of the manifest. */
  content_hash: string;
}

/**
 * The registry signing keys this platform trusts (`[catalog] trusted_keys`). The adapter is
 * `@agent-platform/registry-core` `createRegistryTrust` (Ed25519).
 */
export interface RegistryTrust {
  /** Key ids of the trusted keys; empty = nothing installs by name. */
  readonly keyIds: readonly string[];
  /** The key id of the trusted key that signed `fields`, or null (bad signature, or no trusted key made it). */
  verify(fields: SignedFields, signature: string): string | null;
}

/** A configured registry: where packages come from and whose signatures count. */
export interface RegistryAccess {
  source: RegistrySource;
  trust: RegistryTrust;
}
