import { Type, type Static } from 'typebox';

/**
 * GET /dashboard/config.json (docs/dashboard.md): what the page needs before anyone signs in.
 * Nothing secret. The page (apps/dashboard/web) reads it through this type.
 */
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
  audit_categories: Type.Array(Type.String(), {
    description: 'The audit categories (docs/audit.md) the audit page filters on, so it never lists a stale set.',
  }),
});
export type DashboardSettings = Static<typeof DashboardSettings>;
