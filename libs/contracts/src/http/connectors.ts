import { Type, type Static } from 'typebox';

/**
 * GET /connectors/health (spec §Resources "Integration", connector health item). The connector
 * set is fixed at six (spec); the ids are ours (docs/connectors.md) and are the keys of
 * `[connectors] urls`.
 */
export const CONNECTORS = [
  { id: 'claims-system', name: 'Claims system' },
  { id: 'crm', name: 'CRM' },
  { id: 'e-signature', name: 'E-signature' },
  { id: 'object-store', name: 'Object store' },
  { id: 'payments', name: 'Payments' },
  { id: 'sso', name: 'Single sign-on' },
] as const;
export type ConnectorId = (typeof CONNECTORS)[number]['id'];
export const CONNECTOR_IDS: readonly string[] = CONNECTORS.map((c) => c.id);

export const CONNECTOR_STATUSES = ['Healthy', 'Degraded', 'Unreachable', 'NotConfigured'] as const;
export type ConnectorStatus = (typeof CONNECTOR_STATUSES)[number];

export const ConnectorHealthItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Union(
    [
      Type.Literal('Healthy'),
      Type.Literal('Degraded'),
      Type.Literal('Unreachable'),
      Type.Literal('NotConfigured'),
    ],
    {
      description:
        '`Healthy` within the latency budget, `Degraded` reachable but over it, `Unreachable` configured but failed, `NotConfigured` no URL set.',
    },
  ),
  latency_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Time to the answer; null when none came.',
  }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it is Unreachable (or over budget); else null.',
  }),
});
export type ConnectorHealthItem = Static<typeof ConnectorHealthItem>;

export const ConnectorHealthList = Type.Object({
  connectors: Type.Array(ConnectorHealthItem, { description: 'The six connectors, in a fixed order.' }),
});
export type ConnectorHealthList = Static<typeof ConnectorHealthList>;
