import type { PlatformConfig } from '@agent-platform/contracts';
import { Errors } from '../errors/errors.ts';
import { IntegrationCallError } from './integration-connector.ts';
import type { IntegrationSupervisor } from './integration-supervisor.ts';
import type { IntegrationCallOptions, IntegrationCallResult } from './integration-tools.ts';

export interface HostCall {
  integrationId: string;
  tool: string;
  args: Record<string, unknown>;
  options: IntegrationCallOptions;
  settings: () => PlatformConfig['integrations'];
}

/**
 * One tool call through this node's connection, bounded by `[integrations] call_timeout_secs`.
 * Failures on the platform's side become PlatformErrors with a message naming the integration,
 * the tool and what happened; an abort by the caller is rethrown as the caller's abort.
 */
export async function callThrough(
  supervisor: IntegrationSupervisor | undefined,
  call: HostCall,
): Promise<IntegrationCallResult> {
  const { integrationId: id, tool, options } = call;
  if (supervisor === undefined)
    throw Errors.integrationNotConnected(
      id,
      'it is not connected on this worker (POST /integrations/{id}/connect)',
    );
  const connection = supervisor.connection();
  if (connection === null) {
    const status = supervisor.status();
    throw Errors.integrationNotConnected(
      id,
      status === null ? 'its server is starting' : typeof status === 'object' ? status.Error : status,
    );
  }
  if (!supervisor.tools().some((t) => t.name === tool))
    return {
      text: `error: integration '${id}' has no tool '${tool}'; its tools: ${
        supervisor
          .tools()
          .map((t) => t.name)
          .join(', ') || 'none'
      }`,
      is_error: true,
    };
  const secs = call.settings().call_timeout_secs;
  try {
    return await connection.call(tool, call.args, {
      timeoutMs: secs * 1000,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    });
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason;
    if (error instanceof IntegrationCallError && error.reason === 'timeout')
      throw Errors.integrationCallTimeout(id, tool, secs);
    if (error instanceof IntegrationCallError && error.reason === 'connection_lost')
      throw Errors.integrationCallFailed(
        id,
        tool,
        `${error.message}; it is being restarted, and the call may or may not have taken effect`,
      );
    throw Errors.integrationCallFailed(id, tool, error instanceof Error ? error.message : String(error));
  }
}
