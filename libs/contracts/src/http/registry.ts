import { Type, type Static } from 'typebox';
import { CollectionAuthor, PackageType } from '../packages.ts';
import { Health } from './daemon.ts';
import { RegistryPendingOwner } from './registry-teams.ts';
import { RegistryProvenance, TrustedPublisher } from './registry-trusted-publishing.ts';

export * from './registry-trusted-publishing.ts';

/**
 * HTTP bodies of the registry surface (spec §Registry surface: the routes are the spec's, every
 * body but the issuer's is ours, in the spirit of cargo and npm; docs/registry.md). The platform's
 * catalog reads the same shapes through its registry client, so both sides share this file.
 */

const Iso = (description: string) => Type.String({ description: `${description} ISO 8601 UTC.` });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** The three roles of the registry (docs/registry.md "Roles"); `registry-admin` holds permission `registry:admin`. */
export const REGISTRY_ROLES = ['registry-admin', 'publisher', 'reader'] as const;
export const RegistryRole = Type.Enum(REGISTRY_ROLES);
export type RegistryRole = (typeof REGISTRY_ROLES)[number];

/** `GET /signing-key`: the public half of the key that signs every accepted version. */
export const RegistrySigningKey = Type.Object({
  algorithm: Type.Literal('Ed25519'),
  key_id: Type.String({ description: 'sha256 fingerprint of the raw public key, `sha256:<hex>` (first 16 bytes).' }),
  public_key: Type.String({ description: '`ed25519:<base64url of the 32 raw bytes>`: the form [catalog] trusted_keys takes.' }),
  public_key_pem: Type.String({ description: 'The same key as SPKI PEM.' }),
});
export type RegistrySigningKey = Static<typeof RegistrySigningKey>;

/** A yank (cargo, PEP 592): skipped by new resolution, still downloadable by exact version. */
export const RegistryYank = Type.Object({
  reason: Type.String(),
  security: Type.Boolean({ description: 'A security yank: published on the revocation feed; platforms suspend what runs it.' }),
  yanked_at: Iso('When.'),
  yanked_by: Type.String({ description: 'Identity that yanked it.' }),
});
export type RegistryYank = Static<typeof RegistryYank>;

/** One published version (`GET /packages/{name}/{version}`, the answer of a publish). */
export const RegistryVersion = Type.Object({
  name: Type.String(),
  version: Type.String(),
  type: PackageType,
  title: Type.String(),
  description: Type.String(),
  license: Type.String(),
  min_platform_version: Type.String(),
  keywords: Type.Array(Type.String()),
  categories: Type.Array(Type.String()),
  regions: Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2, upper case; empty = all.' }),
  dependencies: Type.Record(Type.String(), Type.String(), { description: 'Name to semver constraint, as published.' }),
  repository: Type.Optional(Type.String({ description: '`[package.metadata] repository` (an http(s) URL), when the manifest has one.' })),
  homepage: Type.Optional(Type.String({ description: '`[package.metadata] homepage` (an http(s) URL), when the manifest has one.' })),
  has_readme: Type.Optional(
    Type.Boolean({ description: 'Whether the archive holds a README.md: `GET /packages/{name}/{version}/readme` serves it rendered. Absent (false) for versions published before READMEs were kept.' }),
  ),
  content_hash: Type.String({ description: '`[signing] content_hash` of the manifest: `sha256:<hex>` of the payload file, checked at publish.' }),
  archive_sha256: Type.String({ description: '`sha256:<hex>` of the archive bytes as stored and downloaded.' }),
  size_bytes: Type.Integer(),
  signature: Type.String({ description: 'base64url Ed25519 signature over the signed statement (docs/registry.md "Signatures").' }),
  key_id: Type.String({ description: 'key_id of the signing key.' }),
  published_at: Iso('Publish time.'),
  published_by: Type.String({ description: 'Identity that published it.' }),
  yanked: Type.Boolean(),
  yank: Nullable(RegistryYank),
  provenance: Type.Optional(
    Type.Union([RegistryProvenance, Type.Null()], {
      description: 'Trusted publishing: the CI identity and claims that published it; null otherwise (always sent by this registry, absent from older ones).',
    }),
  ),
});
export type RegistryVersion = Static<typeof RegistryVersion>;

export const RegistryVersionList = Type.Object({
  name: Type.String(),
  versions: Type.Array(RegistryVersion, { description: 'Highest version first (semver order).' }),
});
export type RegistryVersionList = Static<typeof RegistryVersionList>;

/** `GET /packages/{name}`. */
export const RegistryPackage = Type.Object({
  name: Type.String(),
  type: PackageType,
  title: Type.String({ description: 'Of the latest version.' }),
  description: Type.String({ description: 'Of the latest version.' }),
  owners: Type.Array(Type.String(), { description: 'Identities (and `team:<name>` teams) that may publish and yank; the first publisher first.' }),
  pending_owners: Type.Optional(
    Type.Array(RegistryPendingOwner, {
      description:
        'Invited by an owner, not owners until they accept (POST /packages/{name}/owners/accept). In the answers of the owner changes only: the public GET /packages/{name} leaves them out, GET /packages/{name}/owners shows them to those who may see them.',
    }),
  ),
  latest: Nullable(Type.String({ description: 'Highest non-yanked release (a pre-release only when nothing else exists); null when all are yanked.' })),
  versions: Type.Array(Type.String(), { description: 'Every version, highest first, yanked ones included.' }),
  keywords: Type.Array(Type.String()),
  categories: Type.Array(Type.String()),
  regions: Type.Array(Type.String()),
  license: Type.Optional(Type.String({ description: 'Of the latest version.' })),
  repository: Type.Optional(Type.String({ description: 'Of the latest version, when it names one.' })),
  homepage: Type.Optional(Type.String({ description: 'Of the latest version, when it names one.' })),
  created_at: Iso('First publish.'),
  updated_at: Iso('Last publish or yank.'),
  dist_tags: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'Tag -> version: `latest` (the highest listed version, computed) and the tags owners set (`next`, `beta`...).',
    }),
  ),
  deprecated: Type.Optional(
    Nullable(
      Type.Object({
        message: Type.String({ description: 'What the owners say instead: use another package, a newer major...' }),
        deprecated_at: Iso('When.'),
        deprecated_by: Type.String({ description: 'Who.' }),
      }),
    ),
  ),
});
export type RegistryPackage = Static<typeof RegistryPackage>;

/** `PUT /packages/{name}/dist-tags/{tag}`: the version the tag names. */
export const RegistryDistTagBody = Type.Object({ version: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false });
export type RegistryDistTagBody = Static<typeof RegistryDistTagBody>;
export const RegistryDistTagParams = Type.Object({ name: Type.String(), tag: Type.String() });

/** `PUT /packages/{name}/deprecation`: the package still installs; its page and downloads say so. */
export const RegistryDeprecationBody = Type.Object({ message: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false });
export type RegistryDeprecationBody = Static<typeof RegistryDeprecationBody>;

/** `GET /packages/{name}/dependents`: reverse dependencies, from the search index. */
export const RegistryDependents = Type.Object({
  name: Type.String(),
  dependents: Type.Array(
    Type.Object({
      name: Type.String(),
      version: Type.String({ description: 'Its latest listed version, the one that depends on the package.' }),
      requirement: Type.String({ description: 'The constraint it asks for.' }),
    }),
    { description: 'By name: the packages whose latest listed version depends on this one.' },
  ),
});
export type RegistryDependents = Static<typeof RegistryDependents>;

/** `GET /packages/{name}/downloads`: downloads per version (every one since publish) and per day (the last 90 days). */
export const RegistryDownloads = Type.Object({
  name: Type.String(),
  total: Type.Integer({ minimum: 0 }),
  versions: Type.Array(Type.Object({ version: Type.String(), downloads: Type.Integer({ minimum: 0 }) }), { description: 'Highest first; versions never downloaded are 0.' }),
  days: Type.Array(Type.Object({ date: Type.String({ description: 'YYYY-MM-DD, UTC.' }), downloads: Type.Integer({ minimum: 0 }) }), {
    description: 'Oldest first; only the days with downloads, over the last 90.',
  }),
});
export type RegistryDownloads = Static<typeof RegistryDownloads>;

export const RegistryHistoryEntry = Type.Object({
  at: Iso('When.'),
  action: Type.Union([
    Type.Literal('publish'),
    Type.Literal('yank'),
    Type.Literal('unyank'),
    Type.Literal('owners'),
    Type.Literal('deprecate'),
    Type.Literal('undeprecate'),
    Type.Literal('tag'),
    Type.Literal('untag'),
    Type.Literal('trusted-publishers'),
  ]),
  version: Nullable(Type.String()),
  identity: Type.String({ description: 'Who.' }),
  reason: Nullable(Type.String()),
  security: Type.Boolean({ description: 'A security yank.' }),
  owners: Type.Optional(Type.Array(Type.String(), { description: 'action owners: the owners after the change.' })),
  tag: Type.Optional(Type.String({ description: 'actions tag and untag: the dist-tag.' })),
  trusted_publishers: Type.Optional(Type.Array(TrustedPublisher, { description: 'action trusted-publishers: the list after the change.' })),
  provenance: Type.Optional(RegistryProvenance),
});
export type RegistryHistoryEntry = Static<typeof RegistryHistoryEntry>;

export const RegistryHistory = Type.Object({
  name: Type.String(),
  entries: Type.Array(RegistryHistoryEntry, { description: 'Oldest first.' }),
});
export type RegistryHistory = Static<typeof RegistryHistory>;

/** `POST /packages/{name}/{version}/yank`; `yanked: false` un-yanks (a reason is still recorded). */
export const RegistryYankBody = Type.Object(
  {
    reason: Type.String({ minLength: 1, maxLength: 500, description: 'Why: shown in the history, and on the revocation feed for a security yank.' }),
    security: Type.Optional(Type.Boolean({ description: 'Mark as a security yank (default false).' })),
    yanked: Type.Optional(Type.Boolean({ description: 'false = un-yank (default true).' })),
  },
  { additionalProperties: false },
);
export type RegistryYankBody = Static<typeof RegistryYankBody>;

/** `PUT /packages/{name}/owners` (ours: ownership transfer, docs/registry.md "Ownership"). */
export const RegistryOwnersBody = Type.Object(
  { owners: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 50, description: 'The new owner list.' }) },
  { additionalProperties: false },
);
export type RegistryOwnersBody = Static<typeof RegistryOwnersBody>;

export const RegistrySearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Words matched against name, title, description and keywords.' })),
    type: Type.Optional(PackageType),
    category: Type.Optional(Type.String({ description: 'A taxonomy path; its sub-categories match too.' })),
    region: Type.Optional(Type.String({ description: 'ISO 3166-1 alpha-2; packages for all regions match too.' })),
    keyword: Type.Optional(Type.String()),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);
export type RegistrySearchQuery = Static<typeof RegistrySearchQuery>;

export const RegistrySearchHit = Type.Object({
  name: Type.String(),
  type: PackageType,
  title: Type.String(),
  description: Type.String(),
  latest: Type.String(),
  keywords: Type.Array(Type.String()),
  categories: Type.Array(Type.String()),
  regions: Type.Array(Type.String()),
  score: Type.Number({ description: 'Higher is better; hits are sorted by it, then by name.' }),
});
export type RegistrySearchHit = Static<typeof RegistrySearchHit>;

export const RegistrySearchResult = Type.Object({
  total: Type.Integer({ description: 'Hits over every page.' }),
  page: Type.Integer(),
  per_page: Type.Integer(),
  results: Type.Array(RegistrySearchHit),
});
export type RegistrySearchResult = Static<typeof RegistrySearchResult>;

export const TaxonomyCategory = Type.Object({
  path: Type.String({ description: 'Slash-separated, e.g. `insurance/claims`.' }),
  title: Type.String(),
  description: Type.String(),
});
export const Taxonomy = Type.Object({
  version: Type.String({ description: 'Changes whenever the category list changes.' }),
  categories: Type.Array(TaxonomyCategory),
});
export type Taxonomy = Static<typeof Taxonomy>;
export const TaxonomyVersion = Type.Object({ version: Type.String() });
export type TaxonomyVersion = Static<typeof TaxonomyVersion>;

export const RegionList = Type.Object({
  regions: Type.Array(Type.Object({ code: Type.String({ description: 'ISO 3166-1 alpha-2.' }), name: Type.String({ description: 'English short name.' }) })),
});
export type RegionList = Static<typeof RegionList>;

/** A collection as stored (COLLECTION.toml, spec §Package manifests), with who published it. */
export const RegistryCollection = Type.Object({
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
  version: Type.String(),
  license: Type.String(),
  featured: Type.Boolean(),
  tags: Type.Array(Type.String()),
  min_platform_version: Type.Optional(Type.String({ description: 'As in COLLECTION.toml; absent when it has none.' })),
  icon: Type.Optional(Type.String()),
  author: Type.Optional(CollectionAuthor),
  metadata: Type.Optional(
    Type.Object({
      categories: Type.Array(Type.String(), { description: 'Taxonomy paths.' }),
      regions: Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2, upper case; empty = all.' }),
    }),
  ),
  packages: Type.Array(
    Type.Object({ name: Type.String(), version: Type.String(), package_type: PackageType, is_dependency: Type.Boolean() }),
  ),
  owners: Type.Array(Type.String()),
  created_at: Iso('First publish.'),
  updated_at: Iso('Last update.'),
});
export type RegistryCollection = Static<typeof RegistryCollection>;
export const RegistryCollectionList = Type.Object({ collections: Type.Array(RegistryCollection) });
export type RegistryCollectionList = Static<typeof RegistryCollectionList>;

/** `POST /keys` of the registry in mode local. */
export const RegistryKeyCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    role: RegistryRole,
    expires_in: Type.Optional(Type.String({ description: 'Duration such as `90d`; absent = never.' })),
  },
  { additionalProperties: false },
);
export type RegistryKeyCreateBody = Static<typeof RegistryKeyCreateBody>;

export const RegistryKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: RegistryRole,
  prefix: Type.String({ description: 'First characters of the secret, to recognise it.' }),
  created_at: Iso('Issued.'),
  expires_at: Nullable(Type.String()),
  revoked: Type.Boolean(),
});
export type RegistryKey = Static<typeof RegistryKey>;
export const RegistryIssuedKey = Type.Object({ ...RegistryKey.properties, secret: Type.String({ description: 'Shown once (`reg_sk_...`).' }) });
export type RegistryIssuedKey = Static<typeof RegistryIssuedKey>;
export const RegistryKeyList = Type.Object({ keys: Type.Array(RegistryKey) });
export type RegistryKeyList = Static<typeof RegistryKeyList>;

/**
 * What a publisher's own token may do (docs/registry-auth.md "Tokens"), as crates.io's scopes:
 * publish a package new to the registry, publish a version of an existing one, yank or un-yank,
 * change owners.
 */
export const REGISTRY_TOKEN_SCOPES = ['publish-new', 'publish-update', 'yank', 'change-owners'] as const;
export const RegistryTokenScope = Type.Enum(REGISTRY_TOKEN_SCOPES);
export type RegistryTokenScope = (typeof REGISTRY_TOKEN_SCOPES)[number];

export const RegistryTokenCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    scopes: Type.Array(RegistryTokenScope, { minItems: 1, maxItems: REGISTRY_TOKEN_SCOPES.length, uniqueItems: true }),
    packages: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 80 }), {
        minItems: 1,
        maxItems: 20,
        description: 'Package names, or name prefixes ending in `*` (`claims-*`); absent = every package the identity may change.',
      }),
    ),
    expires_in: Type.Optional(Type.String({ description: 'Duration such as `90d`; absent = never.' })),
  },
  { additionalProperties: false },
);
export type RegistryTokenCreateBody = Static<typeof RegistryTokenCreateBody>;

export const RegistryToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  identity: Type.String({ description: 'Who the token acts as: the identity that created it.' }),
  scopes: Type.Array(RegistryTokenScope),
  packages: Nullable(Type.Array(Type.String())),
  prefix: Type.String({ description: 'First characters of the secret, to recognise it.' }),
  created_at: Iso('Issued.'),
  expires_at: Nullable(Type.String()),
  revoked: Type.Boolean(),
});
export type RegistryToken = Static<typeof RegistryToken>;
export const RegistryIssuedToken = Type.Object({ ...RegistryToken.properties, secret: Type.String({ description: 'Shown once (`reg_pt_...`).' }) });
export type RegistryIssuedToken = Static<typeof RegistryIssuedToken>;
export const RegistryTokenList = Type.Object({ tokens: Type.Array(RegistryToken) });
export type RegistryTokenList = Static<typeof RegistryTokenList>;

/** Spec §Registry surface: the body of `POST /admin/issuers` (and PUT). */
export const IssuerBody = Type.Object(
  {
    issuer: Type.String({ minLength: 1, description: 'Issuer URL, compared exactly with the `iss` claim.' }),
    audience: Type.String({ minLength: 1 }),
    jwks_uri: Type.String({ description: 'Empty = discovered from <issuer>/.well-known/openid-configuration.' }),
    role_claim: Type.String({ minLength: 1, description: 'Claim holding the external role(s): a string or an array; dots reach nested claims.' }),
    allowed_algorithms: Type.Array(Type.String(), { minItems: 1 }),
    role_mapping: Type.Record(Type.String(), RegistryRole),
    jwks_cache_ttl_secs: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type IssuerBody = Static<typeof IssuerBody>;
export const Issuer = Type.Object({ id: Type.String(), ...IssuerBody.properties, created_at: Type.String(), updated_at: Type.String() });
export type Issuer = Static<typeof Issuer>;
export const IssuerList = Type.Object({ issuers: Type.Array(Issuer) });
export type IssuerList = Static<typeof IssuerList>;

/** `GET /auth/whoami` of the registry. */
export const RegistryWhoami = Type.Object({
  identity: Type.String(),
  role: RegistryRole,
  authenticated: Type.Boolean(),
  key_id: Nullable(Type.String()),
  issuer: Nullable(Type.String({ description: 'The OIDC issuer of a token; null for a key or anonymous.' })),
});
export type RegistryWhoami = Static<typeof RegistryWhoami>;

/** One security yank on the revocation feed. */
export const Revocation = Type.Object({
  seq: Type.Integer({ minimum: 1, description: 'Feed position: strictly increasing, never reused.' }),
  name: Type.String(),
  version: Type.String(),
  reason: Type.String(),
  revoked_at: Iso('When the security yank happened.'),
});
export type Revocation = Static<typeof Revocation>;

/**
 * `GET /revocations?since=<seq>` (ours, docs/registry.md "Revocation feed"): `feed` is a compact
 * JWS (EdDSA, the registry's signing key, `kid` = key_id) whose payload is `RevocationFeedPayload`.
 * The same JWS is pushed on the bus subject `registry.revocations` where platforms share the bus.
 */
export const RevocationFeedPayload = Type.Object({
  iss: Type.String({ description: 'The registry key_id.' }),
  iat: Type.Integer({ description: 'Seconds since the epoch.' }),
  since: Type.Integer({ minimum: 0 }),
  latest_seq: Type.Integer({ minimum: 0 }),
  revocations: Type.Array(Revocation),
});
export type RevocationFeedPayload = Static<typeof RevocationFeedPayload>;
export const RevocationFeed = Type.Object({ feed: Type.String() });
export type RevocationFeed = Static<typeof RevocationFeed>;
export const RevocationFeedQuery = Type.Object({ since: Type.Optional(Type.Integer({ minimum: 0, default: 0 })) }, { additionalProperties: false });
export type RevocationFeedQuery = Static<typeof RevocationFeedQuery>;

/** `GET /health` of the registry: the api's report plus the archive store's. */
export const RegistryHealth = Type.Object({
  ...Health.properties,
  archives: Type.Object(
    { status: Type.Union([Type.Literal('ok'), Type.Literal('down')]), detail: Type.Optional(Type.String()) },
    { description: 'The archive store (filesystem or S3): reachable and writable.' },
  ),
});
export type RegistryHealth = Static<typeof RegistryHealth>;

export const RegistryPackageParams = Type.Object({ name: Type.String() });
export const RegistryVersionParams = Type.Object({ name: Type.String(), version: Type.String() });
