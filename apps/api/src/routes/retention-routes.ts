import {
  CreateLegalHoldBody,
  ErrorEnvelope,
  LegalHoldList,
  LegalHoldParams,
  LegalHoldView,
  RetentionStatus,
  SweepReport,
} from '@agent-platform/contracts';
import type { RoutePlugin } from '../api-app.ts';

/**
 * Retention and legal holds (beyond the spec; docs/retention.md). Holds are read by RetentionRead
 * (admin, operator, auditor) and placed or lifted by RetentionManage (admin, auditor) without a
 * restart; each change is audited twice, like POST /audit/append: the request (category
 * `retention`) and the hold itself (`retention.hold.placed` / `lifted`, with its subject and reason).
 */
const TAGS = ['retention'];

export const retentionRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/retention/status',
    {
      config: { action: 'RetentionRead' },
      schema: {
        tags: TAGS,
        summary:
          'Per data class: the period, the oldest item kept; the audit archive; legal holds; the last sweep',
        response: { 200: RetentionStatus },
      },
    },
    async () => deps.retention.status(),
  );

  app.get(
    '/retention/holds',
    {
      config: { action: 'RetentionRead' },
      schema: {
        tags: TAGS,
        summary: 'Legal holds in force: those of [retention], then those placed through the api',
        response: { 200: LegalHoldList },
      },
    },
    async () => ({ holds: await deps.retention.holds.list() }),
  );

  app.post(
    '/retention/holds',
    {
      config: { action: 'RetentionManage', audit: 'retention' },
      schema: {
        tags: TAGS,
        summary:
          'Place a legal hold on an agent or a business key: nothing it covers is deleted until it is lifted',
        body: CreateLegalHoldBody,
        response: { 201: LegalHoldView, 400: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const { agent_id, business_key, reason } = request.body;
      const hold = await deps.retention.holds.add(
        { agent_id, business_key, reason },
        { identity: request.caller.identity, role: request.caller.role },
      );
      return reply.code(201).send(hold);
    },
  );

  app.delete(
    '/retention/holds/:id',
    {
      config: { action: 'RetentionManage', audit: 'retention' },
      schema: {
        tags: TAGS,
        summary:
          'Lift a legal hold placed through the api (the next sweep may then remove what it kept); 409 for a hold of [retention]',
        params: LegalHoldParams,
        response: { 200: LegalHoldView, 404: ErrorEnvelope, 409: ErrorEnvelope },
      },
    },
    async (request) =>
      deps.retention.holds.remove(request.params.id, {
        identity: request.caller.identity,
        role: request.caller.role,
      }),
  );

  app.post(
    '/retention/sweep',
    {
      config: { action: 'RetentionManage', audit: 'retention' },
      schema: {
        tags: TAGS,
        summary: 'Run a retention sweep now (outside the schedule); 409 while another process is sweeping',
        response: { 200: SweepReport, 409: ErrorEnvelope },
      },
    },
    async (request) =>
      deps.retention.sweepNow({ identity: request.caller.identity, role: request.caller.role }),
  );
};
