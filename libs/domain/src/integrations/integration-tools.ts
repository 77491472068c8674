/**
 * The port the tool loop uses to reach integrations (docs/integrations.md "Using the tools").
 * Implemented by the IntegrationHost of the process the agent runs in (an agent worker, or the
 * all-in-one): tools run where agents run.
 */

/** One native tool of a connected integration. */
export interface IntegrationTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  /**
   * True when calling it changes nothing: an MCP tool whose `annotations.readOnlyHint` is true,
   * or a GET operation of a REST adapter. Everything else counts as state-changing.
   */
  read_only: boolean;
}

/**
 * What a call returned. `is_error`: the server answered with a failure (an MCP result with
 * `isError`, a REST answer outside 2xx, whose status is in `text`). Failures of the platform's
 * side (not connected, timed out, the server died mid-call) are thrown instead.
 */
export interface IntegrationCallResult {
  text: string;
  is_error: boolean;
}

export interface IntegrationCallOptions {
  /** Aborting cancels the call (MCP: a `notifications/cancelled` is sent to the server). */
  signal?: AbortSignal;
  /**
   * Sent to the server so that a system of record can de-duplicate: MCP request
   * `_meta["agent-platform/idempotency_key"]`, REST header `Idempotency-Key`.
   */
  idempotencyKey?: string;
}

export interface IntegrationTools {
  /** The live tool list of a connected integration in this process; throws PlatformError when not connected. */
  tools(integrationId: string): Promise<IntegrationTool[]>;
  /**
   * Calls one tool. Throws PlatformError when the integration is not connected here (InvalidState),
   * when the call takes longer than `[integrations] call_timeout_secs` (Timeout), or when the
   * server dies or the connection breaks during the call (Internal, retryable); never hangs.
   */
  call(
    integrationId: string,
    tool: string,
    args: Record<string, unknown>,
    options: IntegrationCallOptions,
  ): Promise<IntegrationCallResult>;
}

/** The `_meta` key an MCP tool call carries its idempotency key under. */
export const IDEMPOTENCY_META_KEY = 'agent-platform/idempotency_key';
/** The HTTP header a REST adapter call carries its idempotency key in. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
