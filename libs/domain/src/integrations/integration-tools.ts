/** A tool of a connected integration, as its server (or adapter.json) describes it. */
export interface IntegrationTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  /** MCP `annotations.readOnlyHint === true`; an adapter's GET operations. Anything else may write. */
  read_only: boolean;
}

export interface IntegrationCallResult {
  text: string;
  /** The server answered that the call failed (MCP `isError`, a non-2xx adapter response). */
  is_error: boolean;
}

/** The integrations this process runs (agent workers, the all-in-one): what the tool loop calls. */
export interface IntegrationTools {
  /** The live tool list of a connected integration in this process; throws PlatformError when not connected. */
  tools(integrationId: string): Promise<IntegrationTool[]>;
  call(
    integrationId: string,
    tool: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; idempotencyKey?: string },
  ): Promise<IntegrationCallResult>;
}
