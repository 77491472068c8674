import { UsageSummary, UsageView, ValueEvents, ValueEventsQuery, ErrorEnvelope } from '@agent-platform/contracts';
import { createUsageService } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';

const TAGS = ['usage'];

/**
 * GET /usage, /usage/summary, /usage/value-events (spec §Endpoints "Usage and licence"). Read-only:
 * usage is recorded by the agent workers as invocations succeed. docs/usage.md has every field.
 */
export const usageRoutes: RoutePlugin = (app, deps) => {
  const usage = createUsageService({ store: deps.store, clock: deps.clock, licence: () => deps.licence.state() });

  app.get(
    '/usage',
    {
      config: { action: 'BudgetRead' },
      schema: { tags: TAGS, summary: 'Tokens, model calls and cost in the current licence period', response: { 200: UsageView } },
    },
    async () => usage.usage(),
  );

  app.get(
    '/usage/summary',
    {
      config: { action: 'BudgetRead' },
      schema: { tags: TAGS, summary: 'Tokens, model calls and cost since the platform was installed', response: { 200: UsageSummary } },
    },
    async () => usage.summary(),
  );

  app.get(
    '/usage/value-events',
    {
      config: { action: 'BudgetRead' },
      schema: {
        tags: TAGS,
        summary: 'Successful invocations with a workflow type, by value class, by workflow type and by week',
        querystring: ValueEventsQuery,
        response: { 200: ValueEvents, 400: ErrorEnvelope },
      },
    },
    async (request) => usage.valueEvents(request.query),
  );
};
