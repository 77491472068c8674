import { Type, type Static, type TSchema } from 'typebox';
import { AgentList } from './http/agents.ts';
import { AgentResponse } from './http/invocation.ts';
import { BusinessKey } from './http/retention.ts';
import { AUDIT_CATEGORIES, AuditEntryList } from './http/security.ts';
import { WorkflowRunStatus } from './http/workflows.ts';
import type { Action } from './roles.ts';

/**
 * The five tools of the MCP surface (`[surfaces] mcp = true`, docs/mcp.md). Each mirrors one
 * HTTP route: the same permission action, the same domain call, the spec's wire names. The
 * schemas below are the one source of truth: the server lists them as the tools' `inputSchema`
 * and `outputSchema`, validates arguments with them, and docs/mcp.md's tool reference is
 * generated from them (`npm run docs:generate`).
 */

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const strict = { additionalProperties: false } as const;

/** Largest `wait_secs` of run_workflow: a tool call holds one HTTP request open that long at most. */
export const MCP_MAX_WAIT_SECS = 300;

export const ListAgentsInput = Type.Object(
  {
    state: Type.Optional(Type.Enum(['Running', 'Suspended'], { description: 'Only agents in this state.' })),
  },
  strict,
);
export type ListAgentsInput = Static<typeof ListAgentsInput>;

export const SendMessageInput = Type.Object(
  {
    agent: Type.String({
      minLength: 1,
      description: "The agent's id (UUID) or its name (the agent-template package name).",
    }),
    message: Type.String({ description: 'The message delivered to the agent, as POST /agents/{id}/send.' }),
  },
  strict,
);
export type SendMessageInput = Static<typeof SendMessageInput>;

export const SendMessageOutput = Type.Object({
  agent_id: Type.String({ description: 'The agent that answered (UUID).' }),
  agent_name: Type.String(),
  ...AgentResponse.properties,
});
export type SendMessageOutput = Static<typeof SendMessageOutput>;

export const RunWorkflowInput = Type.Object(
  {
    workflow: Type.String({ minLength: 1, description: "The workflow's id (UUID) or its name." }),
    input: Type.String({ description: 'The workflow input: `{{input}}` of the first step.' }),
    wait_secs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MCP_MAX_WAIT_SECS,
        description: `Wait up to this many seconds for the run to end (at most ${MCP_MAX_WAIT_SECS}, and less than [server] request_timeout_secs); 0 or absent: answer at once with the run Running, then poll get_run.`,
      }),
    ),
    idempotency_key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'As the Idempotency-Key header: a repeat by the same caller with the same input returns the same run.',
      }),
    ),
    business_key: Type.Optional({
      ...BusinessKey,
      description:
        'As `business_key` of POST /workflows/{id}/run: the claim, policy or case number the run is for (1-128 printable characters); a legal hold on it keeps the run (docs/retention.md).',
    }),
  },
  strict,
);
export type RunWorkflowInput = Static<typeof RunWorkflowInput>;

export const GetRunInput = Type.Object(
  { run_id: Type.String({ pattern: UUID_PATTERN, description: 'The run id (UUID) run_workflow answered.' }) },
  strict,
);
export type GetRunInput = Static<typeof GetRunInput>;

export const SearchAuditInput = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: 20,
        description: 'Entries returned, newest first; at most [audit] max_query_limit.',
      }),
    ),
    category: Type.Optional(Type.Enum(AUDIT_CATEGORIES, { description: 'Only entries of this category.' })),
    actor: Type.Optional(
      Type.String({
        description: 'Only entries caused by this identity (an API key name, `oidc:<subject>`).',
      }),
    ),
    since: Type.Optional(
      Type.String({ description: 'ISO 8601 inclusive lower bound on timestamp; UTC when no offset.' }),
    ),
  },
  strict,
);
export type SearchAuditInput = Static<typeof SearchAuditInput>;

/** One tool as the MCP surface lists it; the handler lives in apps/api/src/mcp. */
export interface McpToolContract {
  name: string;
  title: string;
  description: string;
  /** The permission checked against the caller's role: the action of the equivalent HTTP route. */
  action: Action;
  /** That route, named in docs and descriptions. */
  route: string;
  /** True when the call changes nothing (MCP `readOnlyHint`); calls that change something are audited. */
  readOnly: boolean;
  input: TSchema;
  output: TSchema;
}

export const MCP_TOOLS = [
  {
    name: 'list_agents',
    title: 'List agents',
    description:
      'Every agent of the platform, sorted by name: id, name, title, state (Running or Suspended) and equipped competencies.',
    action: 'AgentList',
    route: 'GET /agents',
    readOnly: true,
    input: ListAgentsInput,
    output: AgentList,
  },
  {
    name: 'send_message',
    title: 'Send a message to an agent',
    description:
      'Sends a free-text message to a Running agent (by id or name) and returns its reply, the tools it ran and the tokens used. Counts against the licence like POST /agents/{id}/send.',
    action: 'AgentSendMessage',
    route: 'POST /agents/{id}/send',
    readOnly: false,
    input: SendMessageInput,
    output: SendMessageOutput,
  },
  {
    name: 'run_workflow',
    title: 'Run a workflow',
    description:
      'Starts a run of a workflow (by id or name) with the given input and returns the run. With wait_secs the call waits for the run to end (Completed, Failed or Escalated) up to that bound; otherwise, or when the bound passes, the run is returned still Running: poll get_run with its id.',
    action: 'WorkflowRun',
    route: 'POST /workflows/{id}/run',
    readOnly: false,
    input: RunWorkflowInput,
    output: WorkflowRunStatus,
  },
  {
    name: 'get_run',
    title: 'Get a workflow run',
    description:
      'One workflow run by id: its state, the result of each finished step, the output once Completed and the error once Failed.',
    action: 'WorkflowStatus',
    route: 'GET /runs/{id}',
    readOnly: true,
    input: GetRunInput,
    output: WorkflowRunStatus,
  },
  {
    name: 'search_audit',
    title: 'Search the audit trail',
    description:
      'Entries of the tamper-evident audit trail, newest first, filtered by category, actor (identity) and a lower bound on time.',
    action: 'SecurityAudit',
    route: 'GET /security/audit',
    readOnly: true,
    input: SearchAuditInput,
    output: AuditEntryList,
  },
] as const satisfies readonly McpToolContract[];

export type McpToolName = (typeof MCP_TOOLS)[number]['name'];
