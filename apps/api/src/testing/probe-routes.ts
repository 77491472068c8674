import { Errors, PlatformError } from '@agent-platform/domain';
import { ERROR_CATEGORIES, type ErrorCategory } from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';
import { withWorkerAudit } from '../http/audit-hook.ts';

/** A promise a test opens by hand: lets a "slow" handler wait without sleeping. */
export interface Gate {
  readonly entered: number;
  wait(): Promise<void>;
  open(): void;
}

export function createGate(): Gate {
  let release: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered = 0;
  return {
    get entered() {
      return entered;
    },
    wait: () => {
      entered += 1;
      return opened;
    },
    open: () => release(),
  };
}

const Echo = Type.Object({ message: Type.String() });
const Caller = Type.Object({ identity: Type.String(), role: Type.String(), key_id: Type.Union([Type.String(), Type.Null()]) });

/**
 * Test-only routes that exercise the shared pipeline without depending on any real area:
 * a body route with a strict schema, an optional-body route, a UUID path param, a slow route held
 * by a gate, a bootstrap route, and a route throwing any error category.
 */
export function probeRoutes(gate: Gate = createGate()): RoutePlugin {
  return (app) => {
    app.post(
      '/probe/echo',
      {
        config: { action: 'AgentInvoke' },
        schema: {
          body: Type.Object(
            {
              message: Type.String({ minLength: 1 }),
              count: Type.Optional(Type.Integer({ minimum: 0 })),
              mode: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('slow')])),
            },
            { additionalProperties: false },
          ),
          response: { 200: Echo },
        },
      },
      async (request) => ({ message: request.body.message }),
    );
    app.post(
      '/probe/optional',
      {
        config: { action: 'AgentInvoke' },
        schema: { body: Type.Object({ note: Type.Optional(Type.String()) }), response: { 200: Type.Object({ note: Type.String() }) } },
      },
      async (request) => ({ note: request.body.note ?? '(none)' }),
    );
    app.get(
      '/probe/agents/:id',
      {
        config: { action: 'AgentStatus', ids: { id: 'agent' } },
        schema: { params: Type.Object({ id: Type.String({ format: 'uuid' }) }), response: { 200: Type.Object({ id: Type.String() }) } },
      },
      async (request) => ({ id: request.params.id }),
    );
    app.get(
      '/probe/slow',
      { config: { action: 'AgentStatus' }, schema: { response: { 200: Echo } } },
      async () => {
        await gate.wait();
        return { message: 'finished' };
      },
    );
    app.post(
      '/probe/bootstrap',
      { config: { action: 'KeyManagement', bootstrap: true }, schema: { response: { 200: Caller } } },
      async (request) => request.caller,
    );
    // A stand-in for an agent worker that appended the request's audit entry with its answer
    // (`audited`), then a response with `status`; the entry it was handed comes back as the body.
    app.post(
      '/probe/worker-audited',
      {
        config: { action: 'AgentInvoke' },
        schema: { body: Type.Object({ status: Type.Integer(), audited: Type.Boolean() }) },
      },
      async (request, reply) => {
        const { entry } = await withWorkerAudit(request, async (auditEntry) => ({ audited: request.body.audited, entry: auditEntry }));
        return reply.status(request.body.status).send({ entry });
      },
    );
    app.get(
      '/probe/fail/:category',
      {
        config: { action: 'AgentStatus' },
        schema: { params: Type.Object({ category: Type.String() }), response: { 200: Echo } },
      },
      async (request) => {
        const { category } = request.params;
        if (category === 'unexpected') throw new Error('database password leaked in this message');
        if (!(ERROR_CATEGORIES as readonly string[]).includes(category)) throw Errors.validation('unknown category');
        throw new PlatformError(category as ErrorCategory, `probe ${category}`, category === 'RateLimited' ? { retryAfterSecs: 7 } : {});
      },
    );
  };
}
