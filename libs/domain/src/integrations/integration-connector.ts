import type { AdapterPayload, McpPayload } from '@agent-platform/contracts';
import type { IntegrationCallResult, IntegrationTool } from './integration-tools.ts';

/**
 * The port between the integration host (domain) and the transports (libs/integrations): MCP
 * over stdio, MCP over streamable HTTP, REST adapters. One conformance expectation for all of
 * them: `open` either resolves with a working connection or rejects with a message a user can
 * act on; a connection that stops working says so through `lost`; `call` never outlives its
 * `timeoutMs`.
 */
export type IntegrationSpec =
  | { id: string; transport: 'mcp'; payload: McpPayload; key: string | null }
  | { id: string; transport: 'rest' | 'soap'; payload: AdapterPayload; key: string | null };

export interface ConnectionCallOptions {
  signal?: AbortSignal;
  idempotencyKey?: string;
  timeoutMs: number;
}

export interface IntegrationConnection {
  /** Asks the server for its tools now (MCP `tools/list`; an adapter's operations). */
  listTools(timeoutMs: number): Promise<IntegrationTool[]>;
  /**
   * One tool call. Rejects with `IntegrationCallError` for the platform's side of a failure
   * (timeout, connection lost); a failure the server reports is `is_error: true`.
   */
  call(
    tool: string,
    args: Record<string, unknown>,
    options: ConnectionCallOptions,
  ): Promise<IntegrationCallResult>;
  /** A liveness check (MCP `ping`); rejects when the server does not answer in time. */
  ping(timeoutMs: number): Promise<void>;
  /** Resolves, with the reason, once the connection is gone for a reason other than `close()` (the server process exited). */
  readonly lost: Promise<string>;
  /** Closes the connection; a stdio server process is terminated (and killed if it lingers). */
  close(): Promise<void>;
}

export interface IntegrationConnector {
  /** Starts or reaches the server and completes the handshake within `timeoutMs`. */
  open(spec: IntegrationSpec, options: { timeoutMs: number }): Promise<IntegrationConnection>;
}

/** Why a call failed on the platform's side; the host turns it into a PlatformError. */
export class IntegrationCallError extends Error {
  constructor(
    readonly reason: 'timeout' | 'connection_lost' | 'aborted' | 'refused',
    message: string,
  ) {
    super(message);
    this.name = 'IntegrationCallError';
  }
}
