import type { PlatformConfig } from '@agent-platform/contracts';
import { PERMISSIONS } from '@agent-platform/domain';
import { Type, type Static } from 'typebox';
import { providerSignIn } from './dashboard-headers.ts';

/** GET /dashboard/config.json: what the page needs before anyone signs in. Nothing secret. */
export const DashboardSettings = Type.Object({
  version: Type.String(),
  auth_mode: Type.Union([Type.Literal('disabled'), Type.Literal('local'), Type.Literal('oidc')]),
  api_keys: Type.Boolean({
    description: 'Whether svc_sk_ API keys are accepted (mode local, or oidc with allow_local_service_keys).',
  }),
  oidc: Type.Union([
    Type.Object({
      issuer: Type.String(),
      client_id: Type.String(),
      scopes: Type.Array(Type.String()),
      resource: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  permissions: Type.Record(Type.String(), Type.Array(Type.String()), {
    description:
      'The permission matrix (docs/permissions.md), so the page shows each role only the buttons it may use.',
  }),
});
export type DashboardSettings = Static<typeof DashboardSettings>;

/** Read per request: a reload of `[auth]` or `[dashboard]` shows on the next page load. */
export function dashboardSettings(config: PlatformConfig, version: string): DashboardSettings {
  const { auth, dashboard } = config;
  return {
    version,
    auth_mode: auth.mode,
    api_keys: auth.mode === 'local' || (auth.mode === 'oidc' && auth.allow_local_service_keys),
    oidc: providerSignIn(config)
      ? {
          issuer: auth.oidc.issuer,
          client_id: dashboard.oidc_client_id,
          scopes: dashboard.oidc_scopes,
          resource: dashboard.oidc_resource === '' ? null : dashboard.oidc_resource,
        }
      : null,
    permissions: Object.fromEntries(
      Object.entries(PERMISSIONS).map(([action, rule]) => [action, [...rule.roles]]),
    ),
  };
}
