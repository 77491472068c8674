import type { RegistryVersion } from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, httpUrl, trustedHtml } from './html.ts';
import { provenanceOf, versionState } from './version-state.ts';

// The pieces of the package page that decide what a person reads (docs/registry.md "Web page").
const VERSION = {
  name: 'loss-summary',
  version: '1.0.0',
  published_by: 'key:ci',
  yanked: false,
  yank: null,
} as unknown as RegistryVersion;

describe('versionState', () => {
  it('marks yanked, security-yanked, and revoked (which stays after an un-yank)', () => {
    const yank = { reason: 'wrong', yanked_at: '2026-01-01T00:00:00.000Z', yanked_by: 'key:ci' };
    expect(versionState(VERSION, []).map((m) => m.label)).toEqual([]);
    expect(versionState({ ...VERSION, yanked: true, yank: { ...yank, security: false } }, []).map((m) => m.label)).toEqual(['yanked']);
    const revocation = { seq: 3, name: 'loss-summary', version: '1.0.0', reason: 'leaks', revoked_at: '2026-01-02T00:00:00.000Z' };
    const security = versionState({ ...VERSION, yanked: true, yank: { ...yank, security: true } }, [revocation]);
    expect(security.map((m) => m.label)).toEqual(['security-yanked', 'revoked']);
    expect(security[1]?.detail).toBe('leaks (revocation 3, 2026-01-02T00:00:00.000Z)');
    expect(versionState(VERSION, [revocation]).map((m) => m.label)).toEqual(['revoked']);
    expect(versionState(VERSION, [{ ...revocation, version: '2.0.0' }])).toEqual([]);
  });
});

describe('provenanceOf', () => {
  it('says where a trusted publish came from, and nothing without provenance', () => {
    const provenance = { kind: 'trusted-publishing', identity: 'https://ci.example#repo:acme/claims', issuer: 'https://ci.example', claims: { repository: 'acme/claims' } };
    expect(provenanceOf({ ...VERSION, provenance } as RegistryVersion)).toBe('Published from acme/claims by https://ci.example#repo:acme/claims');
    expect(provenanceOf({ ...VERSION, provenance: { ...provenance, claims: {} } } as RegistryVersion)).toBe('Published from https://ci.example by https://ci.example#repo:acme/claims');
    expect(provenanceOf({ ...VERSION, provenance: null })).toBeNull();
    expect(provenanceOf(VERSION)).toBeNull();
  });
});

describe('html', () => {
  it('escapes every interpolated value but trusted markup, and keeps only http(s) URLs', () => {
    const owner = 'team:<img src=x onerror=alert(1)>';
    expect(html`<li title="${owner}">${owner}</li>`.value).toBe(
      '<li title="team:&lt;img src=x onerror=alert(1)&gt;">team:&lt;img src=x onerror=alert(1)&gt;</li>',
    );
    expect(html`<p>${['a&b', html`<b>${"'"}</b>`, null, false, 3]}</p>${trustedHtml('<h1>x</h1>')}`.value).toBe('<p>a&amp;b<b>&#39;</b>3</p><h1>x</h1>');
    expect(escapeHtml(`"'<>&`)).toBe('&quot;&#39;&lt;&gt;&amp;');
    expect(httpUrl('https://example.com/x')).toBe('https://example.com/x');
    expect(httpUrl('javascript:alert(1)')).toBeNull();
    expect(httpUrl(undefined)).toBeNull();
  });
});
