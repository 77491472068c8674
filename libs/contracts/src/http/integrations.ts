import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Integrations and contracts (the integration routes) and §Resources
 * "Integration". docs/integrations.md says what each status means in a fleet.
 */

/** Spec §Resources: `Installed`, `Running`, `Disconnected`, `Disabled`, or `{Error: <message>}`. */
export const IntegrationStatus = Type.Union([
  Type.Literal('Installed'),
  Type.Literal('Running'),
  Type.Literal('Disconnected'),
  Type.Literal('Disabled'),
  Type.Object({ Error: Type.String() }, { additionalProperties: false }),
]);
export type IntegrationStatus = Static<typeof IntegrationStatus>;

export const IntegrationInfo = Type.Object({
  id: Type.String({ description: 'The package name (DECISIONS D9).' }),
  name: Type.String(),
  description: Type.String(),
  version: Type.String(),
  transport: Type.String({ description: '`stdio` or `http` (mcp.json), `rest` or `soap` (adapter.json).' }),
  status: IntegrationStatus,
});
export type IntegrationInfo = Static<typeof IntegrationInfo>;

export const IntegrationList = Type.Object({
  integrations: Type.Array(IntegrationInfo, { description: 'Sorted by id.' }),
});
export type IntegrationList = Static<typeof IntegrationList>;

export const IntegrationInstallBody = Type.Object(
  {
    name: Type.String({ description: 'Absolute path of the integration package directory.' }),
    key: Type.Optional(
      Type.String({
        description:
          'Credential kept in the vault and handed to the server (INTEGRATION_KEY, or Authorization: Bearer); never shown.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type IntegrationInstallBody = Static<typeof IntegrationInstallBody>;

export const IntegrationInstallResult = Type.Object({
  status: Type.Literal('installed'),
  name: Type.String(),
});
export type IntegrationInstallResult = Static<typeof IntegrationInstallResult>;

export const IntegrationIdParams = Type.Object({
  id: Type.String({ description: 'Integration id (its package name).' }),
});
export type IntegrationIdParams = Static<typeof IntegrationIdParams>;

export const IntegrationActionResult = Type.Object({
  status: Type.Union([Type.Literal('connected'), Type.Literal('disconnected')]),
  id: Type.String(),
});
export type IntegrationActionResult = Static<typeof IntegrationActionResult>;

export const IntegrationStatusView = Type.Object({ id: Type.String(), status: IntegrationStatus });
export type IntegrationStatusView = Static<typeof IntegrationStatusView>;

/** Spec §Resources "Tool". */
export const IntegrationToolView = Type.Object({
  name: Type.String(),
  description: Type.String(),
  input_schema: Type.Record(Type.String(), Type.Unknown()),
});
export type IntegrationToolView = Static<typeof IntegrationToolView>;

export const IntegrationToolList = Type.Object({ id: Type.String(), tools: Type.Array(IntegrationToolView) });
export type IntegrationToolList = Static<typeof IntegrationToolList>;

/** Spec §Integration "Contract binding" (GET /contracts). */
export const ContractBindingView = Type.Object({
  contract: Type.String(),
  integration_id: Type.String(),
  bound_at: Type.String({ format: 'date-time' }),
  bound_by: Type.String({ description: 'The operator identity, or `system` for the automatic bind when an agent equips a competency.' }),
});
export type ContractBindingView = Static<typeof ContractBindingView>;

export const ContractBindingList = Type.Object({ bindings: Type.Array(ContractBindingView) });
export type ContractBindingList = Static<typeof ContractBindingList>;
