import { AUDIT_CATEGORIES, type DashboardSettings, type PlatformConfig } from '@agent-platform/contracts';
import { PERMISSIONS } from '@agent-platform/domain';
import { providerSignIn } from './dashboard-headers.ts';

/** GET /dashboard/config.json, read per request: a reload of `[auth]` or `[dashboard]` shows on the next page load. */
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
    audit_categories: [...AUDIT_CATEGORIES],
  };
}
