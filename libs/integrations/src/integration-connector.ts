import type { IntegrationConnection, IntegrationConnector, IntegrationSpec } from '@agent-platform/domain';
import { openMcpConnection } from './mcp-connection.ts';
import { openRestConnection } from './rest-adapter-connection.ts';
import { serverEnv } from './stdio-env.ts';

export interface ConnectorOptions {
  /** The platform process's environment (what a stdio server inherits, minus secrets). */
  env: Record<string, string | undefined>;
  /** Variables that hold the platform's secrets by configuration (`[vault] key_env`, providers' `api_key_env`). */
  secretEnvNames: () => readonly string[];
  /** `[network] allow_private_targets` of the running config (D9). */
  allowPrivateTargets: () => boolean;
  /** Working directory of stdio servers: the platform's data directory. */
  cwd: string;
  /** Sent as the MCP client version. */
  platformVersion: string;
}

/**
 * The integration connector the hosts use (the adapter of the domain's IntegrationConnector
 * port): MCP over stdio or streamable HTTP for mcp.json, HTTP requests for a REST adapter. SOAP
 * adapters are refused here too, though the domain never asks (they stay Disabled).
 */
export function createIntegrationConnector(options: ConnectorOptions): IntegrationConnector {
  return {
    async open(spec: IntegrationSpec, { timeoutMs }): Promise<IntegrationConnection> {
      if (spec.transport === 'mcp') {
        return openMcpConnection({
          id: spec.id,
          payload: spec.payload,
          key: spec.key,
          timeoutMs,
          env: serverEnv({
            platformEnv: options.env,
            secretNames: options.secretEnvNames(),
            packageEnv: spec.payload.env,
            key: spec.key,
          }),
          cwd: options.cwd,
          allowPrivate: options.allowPrivateTargets,
          clientVersion: options.platformVersion,
        });
      }
      if (spec.transport === 'rest')
        return openRestConnection({
          payload: spec.payload,
          key: spec.key,
          allowPrivate: options.allowPrivateTargets,
        });
      throw new Error('SOAP adapters are not supported by this version');
    },
  };
}
