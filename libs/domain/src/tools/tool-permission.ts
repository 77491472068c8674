/**
 * Whether an agent's allow list (AGENT.md `allow_skill_tools` or `allow_integration_tools`)
 * lets it call `tool` of `provider` (a skill or integration id). An entry is a tool name
 * (`lookup_policy`), a provider-qualified name (`claims-system/lookup_policy`), every tool of a
 * provider (`claims-system/*`) or everything (`*`). Documented in docs/tools.md.
 */
export function toolAllowed(allowList: readonly string[], provider: string, tool: string): boolean {
  return allowList.some((entry) => entry === '*' || entry === tool || entry === `${provider}/${tool}` || entry === `${provider}/*`);
}
