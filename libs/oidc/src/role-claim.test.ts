import { describe, expect, it } from 'vitest';
import { externalRoles, mapRole } from './role-claim.ts';

const ROLES = ['registry-admin', 'publisher', 'reader'] as const;

describe('role claim', () => {
  it('reads a string, an array, a nested path and a namespaced claim with dots', () => {
    expect(externalRoles({ role: 'admins' }, 'role')).toEqual(['admins']);
    expect(externalRoles({ groups: ['a', 7, 'b'] }, 'groups')).toEqual(['a', 'b']);
    expect(externalRoles({ realm_access: { roles: ['x'] } }, 'realm_access.roles')).toEqual(['x']);
    expect(externalRoles({ 'https://acme.example/roles': ['y'] }, 'https://acme.example/roles')).toEqual(['y']);
    expect(externalRoles({ scope: 'openid registry:publish' }, 'scope')).toEqual(['openid registry:publish', 'openid', 'registry:publish']);
  });

  it('finds nothing in an absent, odd-typed or inherited claim', () => {
    expect(externalRoles({}, 'groups')).toEqual([]);
    expect(externalRoles({ groups: { a: 1 } }, 'groups')).toEqual([]);
    expect(externalRoles({ a: 'str' }, 'a.length')).toEqual([]);
    expect(externalRoles({ a: {} }, 'a.constructor')).toEqual([]);
  });

  it('maps through role_mapping, the most privileged mapped role winning, and null when none maps', () => {
    const mapping = { staff: 'reader', pubs: 'publisher', root: 'registry-admin' } as const;
    expect(mapRole(['staff', 'pubs'], mapping, ROLES)).toBe('publisher');
    expect(mapRole(['root', 'staff'], mapping, ROLES)).toBe('registry-admin');
    expect(mapRole(['guests', 'toString', '__proto__'], mapping, ROLES)).toBeNull();
  });
});
