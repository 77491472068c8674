import {
  MCP_TOOLS,
  type AuditCategory,
  type McpToolContract,
  type McpToolName,
} from '@agent-platform/contracts';
import { can } from '@agent-platform/domain';
import { ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { toErrorReply } from '../http/error-handler.ts';
import { schemaErrorToPlatformError } from '../http/schema-errors.ts';
import type { AuditNote, ToolContext, ToolHandler } from './tool-context.ts';
import { listAgents, sendMessage } from './tools/agent-tools.ts';
import { searchAudit } from './tools/audit-tools.ts';
import { getRun, runWorkflow } from './tools/workflow-tools.ts';

/** The handler of each tool of the catalogue; the compiler keeps the two complete. */
const HANDLERS: { [N in McpToolName]: ToolHandler<never> } = {
  list_agents: listAgents,
  send_message: sendMessage,
  run_workflow: runWorkflow,
  get_run: getRun,
  search_audit: searchAudit,
};

/** The audit category of each state-changing tool: that of its HTTP route (docs/audit.md). */
const AUDIT_CATEGORY: Partial<Record<McpToolName, AuditCategory>> = {
  send_message: 'request',
  run_workflow: 'workflows',
};

/** The status the equivalent route answers on success, recorded as the audit `result`. */
const SUCCESS_STATUS: Partial<Record<McpToolName, number>> = { run_workflow: 201 };

/**
 * A JSON-RPC -32602 error: the SDK answers any thrown error with its `code`, `message` and `data`.
 * Not the SDK's McpError, whose message is prefixed "MCP error -32602: ".
 */
class InvalidParams extends Error {
  readonly code = ErrorCode.InvalidParams;
  constructor(
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

interface Tool {
  contract: McpToolContract;
  name: McpToolName;
  check: ReturnType<typeof Compile<TSchema>>;
  handler: ToolHandler<unknown>;
}

const TOOLS = new Map<string, Tool>(
  MCP_TOOLS.map((contract) => [
    contract.name,
    {
      contract,
      name: contract.name,
      check: Compile(contract.input),
      handler: HANDLERS[contract.name] as ToolHandler<unknown>,
    },
  ]),
);

/**
 * One `tools/call` (docs/mcp.md "Errors"), in the order of the HTTP pipeline:
 * 1. an unknown tool is a protocol error, JSON-RPC -32602 (MCP spec "Tools": error handling);
 * 2. the role check with the permission matrix, before the arguments are looked at (an
 *    unauthorized caller learns nothing about its input, as a 403 comes before 400/422 over HTTP):
 *    a tool result with `isError` and the flat 403 body, audited under `access`;
 * 3. arguments against the tool's input schema (defaults filled in): a tool result with `isError`
 *    and the spec's envelope naming the argument (`ValidationError`, or `MalformedBody` for a
 *    wrong JSON type), not audited: nothing was attempted. A tool error, not a protocol error, as
 *    MCP 2025-11-25 asks ("Tools", error handling), so that the model that wrote the arguments
 *    reads what is wrong and can call again;
 * 4. the handler. A PlatformError becomes a result with `isError` holding the spec's error
 *    envelope; anything else is `Internal` with a generic message (logged in full, never sent).
 * State-changing tools are audited like their routes, with the status the route would answer.
 */
export async function callTool(
  context: ToolContext,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const tool = TOOLS.get(name);
  if (tool === undefined) {
    throw new InvalidParams(`unknown tool '${name}': the tools are ${[...TOOLS.keys()].join(', ')}`);
  }
  const { action } = tool.contract;
  const note: AuditNote = { target: '/mcp', metadata: { request_id: context.requestId, tool: name } };
  if (!can(context.caller.role, action)) {
    await audit(context, tool, 'access', note, 403);
    return errorResult({
      error: 'forbidden',
      message: `role ${context.caller.role} may not perform ${action}`,
    });
  }
  const input = Value.Default(tool.contract.input, Value.Clone(args));
  if (!tool.check.Check(input)) {
    const { body } = toErrorReply(schemaErrorToPlatformError(tool.check.Errors(input), 'body'));
    return errorResult({ error: { ...body.error, message: `invalid arguments for ${name}: ${body.error.message}` } });
  }
  try {
    const output = await tool.handler(context, input, note);
    await audit(context, tool, AUDIT_CATEGORY[tool.name], note, SUCCESS_STATUS[tool.name] ?? 200);
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
  } catch (error) {
    const mapped = toErrorReply(error);
    if (mapped.unexpected)
      context.log.error(
        { err: error, category: mapped.body.error.category, tool: name },
        'mcp tool call failed',
      );
    note.metadata.error_category = mapped.body.error.category;
    await audit(context, tool, AUDIT_CATEGORY[tool.name], note, mapped.status);
    return errorResult(mapped.body);
  }
}

function errorResult(body: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

/**
 * Records the call when it was refused (`access`) or changes something (its route's category).
 * A failed append is logged and the call still answered, as the HTTP audit hook does.
 */
async function audit(
  context: ToolContext,
  tool: Tool,
  category: AuditCategory | undefined,
  note: AuditNote,
  status: number,
): Promise<void> {
  if (category === undefined) return;
  try {
    await context.deps.audit.record({
      category,
      identity: context.caller.identity,
      role: context.caller.role,
      action: `MCP ${tool.name}`,
      target: note.target,
      result: String(status),
      metadata: note.metadata,
    });
  } catch (error) {
    context.log.error({ err: error }, 'audit append failed');
  }
}
