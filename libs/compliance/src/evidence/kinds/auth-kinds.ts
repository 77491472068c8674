import { Role, type EvidencePointer } from '@agent-platform/contracts';
import type { ApiKeyView } from '@agent-platform/domain';
import { Type } from 'typebox';
import { direct, evidenceKind, listSome, plural } from '../evidence-kind.ts';

const DAY_MS = 86_400_000;

/** Keys that authenticate today: neither revoked nor expired. */
export function activeKeys(keys: readonly ApiKeyView[]): ApiKeyView[] {
  return keys.filter((k) => !k.revoked && !k.expired);
}

export const authEnforced = evidenceKind({
  kind: 'auth_enforced',
  describes:
    'Every request is authenticated: [auth] mode is one of modes (default local or oidc), never disabled.',
  params: Type.Object(
    {
      modes: Type.Optional(
        Type.Array(Type.Union([Type.Literal('local'), Type.Literal('oidc')]), { minItems: 1 }),
      ),
    },
    { additionalProperties: false },
  ),
  plan: (params) =>
    direct((facts) => {
      const modes = params.modes ?? ['local', 'oidc'];
      const mode = facts.config.auth.mode;
      const pointer: EvidencePointer = { type: 'config', ref: 'auth.mode', detail: mode };
      if (mode === 'disabled') {
        return {
          status: 'Unsatisfied',
          summary: 'Authentication is disabled: every caller is an anonymous admin.',
          pointers: [pointer],
        };
      }
      if (!(modes as string[]).includes(mode)) {
        return {
          status: 'Unsatisfied',
          summary: `Authentication mode is ${mode}; the control asks for ${modes.join(' or ')}.`,
          pointers: [pointer],
        };
      }
      return {
        status: 'Satisfied',
        summary: `Every request is authenticated (mode ${mode}) and checked against the role matrix.`,
        pointers: [pointer],
      };
    }),
});

export const roleAssigned = evidenceKind({
  kind: 'role_assigned',
  describes:
    'Someone holds the role: an active API key of that role, or an [auth.oidc] role_mapping entry onto it.',
  params: Type.Object({ role: Role }, { additionalProperties: false }),
  plan: (params) =>
    direct(async (facts) => {
      const { auth } = facts.config;
      if (auth.mode === 'disabled') {
        return {
          status: 'Unsatisfied',
          summary: `Authentication is disabled: every caller is an anonymous admin, so no one holds the ${params.role} role apart.`,
          pointers: [{ type: 'config', ref: 'auth.mode', detail: 'disabled' }],
        };
      }
      const keys = activeKeys(await facts.keys()).filter((k) => k.role === params.role);
      const mapped =
        auth.mode === 'oidc'
          ? Object.entries(auth.oidc.role_mapping)
              .filter(([, role]) => role === params.role)
              .map(([group]) => group)
              .sort()
          : [];
      const pointers: EvidencePointer[] = [
        ...keys.map((k) => ({
          type: 'api_key',
          ref: k.name,
          detail: `${k.role}, created ${k.created_at}${k.expires_at === undefined ? '' : `, expires ${k.expires_at}`}`,
        })),
        ...mapped.map((group) => ({
          type: 'config',
          ref: `auth.oidc.role_mapping.${group}`,
          detail: params.role,
        })),
      ];
      if (keys.length === 0 && mapped.length === 0) {
        return {
          status: 'Unsatisfied',
          summary: `No active API key and no identity-provider group holds the ${params.role} role.`,
          pointers: [],
        };
      }
      const parts = [
        keys.length > 0
          ? `${plural(keys.length, 'active API key')} (${listSome(
              keys.map((k) => k.name),
              5,
            )})`
          : '',
        mapped.length > 0
          ? `identity-provider group${mapped.length === 1 ? '' : 's'} ${listSome(mapped, 5)}`
          : '',
      ].filter((p) => p !== '');
      return {
        status: 'Satisfied',
        summary: `The ${params.role} role is held by ${parts.join(' and ')}.`,
        pointers,
      };
    }),
});

export const keyExpiry = evidenceKind({
  kind: 'key_expiry',
  describes: 'Every active API key expires, at most max_days after it was issued (rotation practice).',
  params: Type.Object(
    { max_days: Type.Integer({ minimum: 1, maximum: 36_600 }) },
    { additionalProperties: false },
  ),
  plan: (params) =>
    direct(async (facts) => {
      const keys = activeKeys(await facts.keys());
      if (keys.length === 0) {
        return facts.config.auth.mode === 'oidc'
          ? {
              status: 'Satisfied',
              summary:
                'No local API key is active; callers present identity-provider tokens, which expire by design.',
              pointers: [{ type: 'config', ref: 'auth.mode', detail: 'oidc' }],
            }
          : { status: 'Unknown', summary: 'No API key is active.', pointers: [] };
      }
      const tooLong = keys.filter(
        (k) =>
          k.expires_at === undefined ||
          (Date.parse(k.expires_at) - Date.parse(k.created_at)) / DAY_MS > params.max_days,
      );
      if (tooLong.length > 0) {
        return {
          status: 'Unsatisfied',
          summary: `${tooLong.length} of ${keys.length} active API keys never expire or live longer than ${params.max_days} days: ${listSome(
            tooLong.map((k) => k.name),
            5,
          )}.`,
          pointers: tooLong.map((k) => ({
            type: 'api_key',
            ref: k.name,
            detail: k.expires_at === undefined ? 'no expiry' : `expires ${k.expires_at}`,
          })),
        };
      }
      return {
        status: 'Satisfied',
        summary: `${keys.length === 1 ? 'The active API key expires' : `All ${keys.length} active API keys expire`} within ${params.max_days} days of issue.`,
        pointers: keys.map((k) => ({
          type: 'api_key',
          ref: k.name,
          detail: `expires ${k.expires_at ?? ''}`,
        })),
      };
    }),
});

export const tlsEnabled = evidenceKind({
  kind: 'tls_enabled',
  describes:
    'The api listener speaks HTTPS ([server.tls]). TLS ended by a proxy in front is invisible to the platform: attest it instead.',
  params: Type.Object({}, { additionalProperties: false }),
  plan: () =>
    direct((facts) =>
      facts.config.server.tls !== undefined
        ? {
            status: 'Satisfied',
            summary: 'The api listener speaks HTTPS.',
            pointers: [{ type: 'config', ref: 'server.tls', detail: 'set' }],
          }
        : {
            status: 'Unsatisfied',
            summary:
              'The api listener speaks plain HTTP ([server.tls] is not set); TLS ended by a proxy in front cannot be seen from here.',
            pointers: [{ type: 'config', ref: 'server.tls', detail: 'not set' }],
          },
    ),
});
