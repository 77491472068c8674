import { describe, expect, it } from 'vitest';
import {
  CHAIN_ANCHOR,
  canonicalJson,
  chainHash,
  chainPayload,
  metadataHash,
  type ChainFields,
} from './audit-hash.ts';
import { sanitizeMetadata } from './sanitize-metadata.ts';

const base: ChainFields = {
  prev_hash: CHAIN_ANCHOR,
  seq: 1,
  timestamp: '2026-01-01T00:00:00.000Z',
  category: 'auth',
  identity: 'alice',
  role: 'admin',
  action: 'POST /auth/keys',
  target: 'key1',
  result: 'success',
  metadata: null,
};

describe('audit hash', () => {
  // Vectors computed outside the code with `printf '%s' '<payload>' | sha256sum`, as docs/audit.md
  // tells a third party to do.
  it('matches the documented construction byte for byte', () => {
    expect(chainPayload(base)).toBe(
      `71:${CHAIN_ANCHOR}1:124:2026-01-01T00:00:00.000Z4:auth5:alice5:admin15:POST /auth/keys4:key17:success0:`,
    );
    expect(chainHash(base)).toBe('sha256:da919bb54eb33e227833f358db53dafd3174fd092d010dbc12c94d8f4a82472d');
  });

  it('hashes metadata through sorted canonical JSON, empty for null', () => {
    const metadata = { b: { d: null, c: [1, 'é'] }, a: 1 };
    expect(canonicalJson(metadata)).toBe('{"a":1,"b":{"c":[1,"é"],"d":null}}');
    expect(metadataHash(metadata)).toBe(
      'sha256:9b580b5a0c89ca7599a65d263ceefcf59ce10a77feb448caa92fe57d4c800f48',
    );
    expect(metadataHash({ a: 1, b: { c: [1, 'é'], d: null } })).toBe(metadataHash(metadata));
    expect(metadataHash(null)).toBe('');
  });

  it('length prefixes keep shifted field boundaries apart', () => {
    const shifted = { ...base, identity: 'alic', role: 'eadmin' };
    expect(chainHash(shifted)).not.toBe(chainHash(base));
    expect(chainPayload({ ...base, target: 'é' })).toContain('2:é');
  });

  it('changes with every covered field', () => {
    const variants: Partial<ChainFields>[] = [
      { prev_hash: `sha256:${'1'.repeat(64)}` },
      { seq: 2 },
      { timestamp: '2026-01-01T00:00:00.001Z' },
      { category: 'keys' },
      { identity: 'bob' },
      { role: 'viewer' },
      { action: 'DELETE /auth/keys' },
      { target: 'key2' },
      { result: 'failure' },
      { metadata: {} },
    ];
    for (const v of variants) expect(chainHash({ ...base, ...v })).not.toBe(chainHash(base));
  });
});

describe('sanitizeMetadata', () => {
  it('drops secret-looking keys at any depth, case-insensitively', () => {
    const out = sanitizeMetadata({
      key: 'db-password',
      Value: 's3cret',
      nested: { api_key: 'x', Authorization: 'Bearer y', kept: 1, list: [{ refresh_token: 'z', ok: true }] },
      PASSWORD: 'p',
      client_secret: 'c',
    });
    expect(out).toEqual({ key: 'db-password', nested: { kept: 1, list: [{ ok: true }] } });
  });

  it('returns null for absent metadata and a JSON-safe copy otherwise', () => {
    expect(sanitizeMetadata(undefined)).toBeNull();
    expect(sanitizeMetadata(null)).toBeNull();
    expect(sanitizeMetadata({ a: undefined, at: new Date('2026-01-01T00:00:00Z') })).toEqual({
      at: '2026-01-01T00:00:00.000Z',
    });
  });
});
