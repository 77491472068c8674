import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Endpoints "Agents" (send and invoke aside: invocation.ts) and the session
 * rows of §Resources. Wire names are the spec's; docs/agents.md says what each route does.
 */

const AgentId = Type.String({ description: 'Agent id (UUID).' });
export const AgentState = Type.Union([Type.Literal('Running'), Type.Literal('Suspended')]);
export type AgentState = Static<typeof AgentState>;
const Equipped = Type.Optional(
  Type.Array(Type.String(), { description: 'Competency names in equip order; omitted entirely when empty.' }),
);

export const AgentIdParams = Type.Object({ id: AgentId });
export type AgentIdParams = Static<typeof AgentIdParams>;

/** An item of GET /agents. */
export const AgentSummary = Type.Object({
  id: AgentId,
  name: Type.String({ description: 'The agent-template package name.' }),
  title: Type.Union([Type.String(), Type.Null()], {
    description:
      "The installed template's manifest title, matched by name; null when no installed template matches.",
  }),
  state: AgentState,
  equipped_competencies: Equipped,
});
export type AgentSummary = Static<typeof AgentSummary>;

export const AgentList = Type.Object({ agents: Type.Array(AgentSummary) });
export type AgentList = Static<typeof AgentList>;

const Count = Type.Integer({ minimum: 0 });

/** GET /agents/{id}: the agent with its uptime and invocation counters. */
export const AgentStatusView = Type.Object({
  id: AgentId,
  name: Type.String(),
  state: AgentState,
  equipped_competencies: Equipped,
  uptime: Type.Integer({
    minimum: 0,
    description: 'Milliseconds Running since the last activation; 0 while Suspended.',
  }),
  tasks_received: Count,
  tasks_completed: Type.Integer({ minimum: 0, description: 'Invocations that finished without an error.' }),
  invocation_metrics: Type.Object({
    total_count: Type.Integer({
      minimum: 0,
      description: 'Invocations that finished, with or without an error.',
    }),
    error_count: Count,
    avg_duration_ms: Type.Integer({
      minimum: 0,
      description: 'floor(total duration / total_count); 0 before any.',
    }),
    by_source: Type.Array(Type.Tuple([Type.String(), Count, Count, Count]), {
      description: '[source, count, error_count, avg_duration_ms] per invocation source, sorted by source.',
    }),
  }),
});
export type AgentStatusView = Static<typeof AgentStatusView>;

/** PUT /agents/{id}: any JSON object, accepted and ignored (spec). */
export const AgentUpdateBody = Type.Record(Type.String(), Type.Unknown());
export type AgentUpdateBody = Static<typeof AgentUpdateBody>;

export const AgentUpdated = Type.Object({ status: Type.Literal('updated') });
export type AgentUpdated = Static<typeof AgentUpdated>;

/** PUT /agents/{id}/model: recorded as the agent's preference; no routing change occurs (spec). */
export const AgentModelBody = Type.Object(
  { model_id: Type.String({ minLength: 1 }), provider: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);
export type AgentModelBody = Static<typeof AgentModelBody>;

export const AgentModelUpdated = Type.Object({ status: Type.Literal('model_updated') });
export type AgentModelUpdated = Static<typeof AgentModelUpdated>;

export const SessionResetView = Type.Object({ status: Type.Literal('reset') });
export type SessionResetView = Static<typeof SessionResetView>;

/** GET /agents/{id}/tools and /skills: always empty (spec). */
export const AgentToolList = Type.Object({ tools: Type.Array(Type.Unknown(), { maxItems: 0 }) });
export type AgentToolList = Static<typeof AgentToolList>;
export const AgentSkillList = Type.Object({ skills: Type.Array(Type.Unknown(), { maxItems: 0 }) });
export type AgentSkillList = Static<typeof AgentSkillList>;

export const SessionState = Type.Union([Type.Literal('active'), Type.Literal('empty')], {
  description: '`active` when the canonical session holds turns, else `empty`.',
});
export type SessionState = Static<typeof SessionState>;

/** GET /agents/{id}/session: `messages` is always empty (transcript retrieval is not implemented, spec). */
export const SessionView = Type.Object({
  agent_id: AgentId,
  state: SessionState,
  messages: Type.Array(Type.Unknown(), { maxItems: 0 }),
});
export type SessionView = Static<typeof SessionView>;

export const AgentSessionList = Type.Object({
  sessions: Type.Array(Type.Object({ agent_id: AgentId, state: SessionState })),
});
export type AgentSessionList = Static<typeof AgentSessionList>;

/** GET /sessions: one row per agent. */
export const SessionList = Type.Object({
  sessions: Type.Array(Type.Object({ agent_id: AgentId, agent_name: Type.String(), state: SessionState })),
});
export type SessionList = Static<typeof SessionList>;
