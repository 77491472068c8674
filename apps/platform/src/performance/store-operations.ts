import type { StoreOperation } from '@agent-platform/store';

/**
 * The store operations each hot route makes, by name (`<collection>.<method>`, `log:<name>.<method>`,
 * `counters.<method>`) and count: the budget `store-operations.test.ts` holds the code to, and the
 * table of docs/performance.md "Store operations per route". A change that adds one to a hot path
 * fails that test until the budget here (and the table) says it was meant.
 *
 * Measured on the all-in-one with local API keys, the example `claims-intake` agent (two
 * competencies, promptonly skills), the `local` model and the privacy gateway on (the defaults),
 * after a few warm-up requests; a workflow step is the difference between a three-step and a
 * one-step run, halved.
 */
export interface RouteBudget {
  route: string;
  operations: Record<string, number>;
  /**
   * In how many separate turns the route's writes are submitted: each is a commit (and with
   * `durability = "full"` a sync) the route waits for one after another on the embedded store,
   * which commits the writes of one turn together (libs/store/src/embedded/group-commit.ts).
   */
  writeTurns: number;
}

/**
 * The invocation path, the same for send, invoke and a chat completion: the key, the agent (api,
 * then worker), the rate-limit window and the received count, the competency and its promptonly
 * skills (read once, for the system prompt; the tools come from the same records), the skills by id
 * for their tools, the session, the gateway's traffic row and routing
 * audit entry, then session, usage event, usage totals, agent stats and the request's audit entry
 * in one group commit, and the platform event's triggers and webhooks.
 */
const INVOCATION_PATH: Record<string, number> = {
  'agents.get': 2,
  'api_keys.find': 1,
  'competencies.get': 1,
  'counters.add': 2,
  'counters.addMany': 2,
  'gateway_traffic.insert': 1,
  'gateway_traffic.replace': 1,
  'log:audit.append': 2,
  'log:usage_events.append': 1,
  'sessions.get': 1,
  'sessions.update': 1,
  'skills.get': 2,
  'triggers.find': 1,
  'webhooks.find': 1,
};

/**
 * The worker's three: the rate-limit window; the received count, the traffic row and the routing
 * entry before the model call; the settle, session, usage, stats and the request's own audit
 * entry after it (the api hands its entry to the worker: docs/audit.md "Who writes an entry").
 */
const INVOCATION_WRITE_TURNS = 3;

export const STORE_BUDGET: readonly RouteBudget[] = [
  { route: 'POST /agents/{id}/send', operations: INVOCATION_PATH, writeTurns: INVOCATION_WRITE_TURNS },
  { route: 'POST /agents/{id}/invoke', operations: INVOCATION_PATH, writeTurns: INVOCATION_WRITE_TURNS },
  { route: 'POST /chat/completions', operations: INVOCATION_PATH, writeTurns: INVOCATION_WRITE_TURNS },
  {
    route: 'GET /agents/{id}',
    operations: {
      'agents.get': 1,
      'api_keys.find': 1,
      'counters.get': 1,
      'counters.list': 1,
    },
    writeTurns: 0,
  },
  {
    route: 'GET /health',
    operations: {},
    writeTurns: 0,
  },
  // A step of a Sequential run: its agent (by name, then by id; the run document it looks ahead
  // in to ask for the agent's rate-limit slot in the claim's turn is the one the previous step's
  // checkpoint left, read only by a run's first step or a step that came over the bus), the run document
  // updated before and after the step, the invocation's writes (no session: steps are stateless)
  // and the step's and the invocation's platform events. Three write turns: the claim with the
  // rate-limit slot; the received count, traffic row and routing entry; the checkpoint with the
  // invocation's settle, usage and stats.
  {
    route: 'workflow step',
    writeTurns: 3,
    operations: {
      'agents.find': 1,
      'agents.get': 1,
      'counters.add': 2,
      'counters.addMany': 2,
      'gateway_traffic.insert': 1,
      'gateway_traffic.replace': 1,
      'log:audit.append': 1,
      'log:usage_events.append': 1,
      'triggers.find': 2,
      'webhooks.find': 2,
      'workflow_runs.update': 2,
    },
  },
];

/** `{ name: count }` of a list of operations, names sorted. */
export function operationCounts(operations: readonly StoreOperation[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { name } of [...operations].sort((a, b) => a.name.localeCompare(b.name))) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

/** In how many separate turns of the event loop `operations` submitted writes (see RouteBudget.writeTurns). */
export function writeTurnsOf(operations: readonly StoreOperation[]): number {
  return new Set(operations.filter((op) => op.kind === 'write').map((op) => op.batch)).size;
}

/** Reads and writes of a budget: a `.get/.find/.count/.tip/.list/.scan` is a read, the rest writes. */
export function readsAndWrites(operations: Record<string, number>): { reads: number; writes: number } {
  let reads = 0;
  let writes = 0;
  for (const [name, n] of Object.entries(operations)) {
    if (/\.(get|find|count|tip|list|scan)$/.test(name)) reads += n;
    else writes += n;
  }
  return { reads, writes };
}
