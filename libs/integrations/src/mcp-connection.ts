import type { IntegrationConnection } from '@agent-platform/domain';
import type { McpConnectOptions } from './mcp-session.ts';

export type { McpConnectOptions } from './mcp-session.ts';

/**
 * One MCP client session (mcp-session.ts). The official SDK and its schemas (several MB of heap)
 * are loaded by the first connection, not when the process starts: most processes never open one
 * (docs/performance.md "Memory").
 */
export async function openMcpConnection(options: McpConnectOptions): Promise<IntegrationConnection> {
  const { openMcpConnection: open } = await import('./mcp-session.ts');
  return open(options);
}
