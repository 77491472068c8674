import {
  ErrorEnvelope,
  WebhookCreateBody,
  WebhookCreated,
  WebhookDeliveriesQuery,
  WebhookDeliveryList,
  WebhookIdParams,
  WebhookList,
  WebhookTestResult,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';

/**
 * Spec §Webhooks (outbound). Beyond the spec: POST /webhooks also returns the signing `secret`
 * (once), and GET /webhooks/{id}/deliveries lists the delivery log (docs/webhooks.md).
 */
const TAGS = ['webhooks'];
const WEBHOOK = { id: 'webhook' };
const Errors4xx = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const webhookRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/webhooks',
    {
      config: { action: 'WebhookRead' },
      schema: { tags: TAGS, summary: 'Every outbound webhook, oldest first (never their secrets)', response: { 200: WebhookList } },
    },
    async () => ({ webhooks: await deps.webhooks.list() }),
  );

  app.post(
    '/webhooks',
    {
      config: { action: 'WebhookManage', audit: 'config' },
      schema: {
        tags: TAGS,
        summary: "Register a URL receiving the agent's events, signed (Standard Webhooks); the secret is shown only here",
        body: WebhookCreateBody,
        response: { 201: WebhookCreated, ...Errors4xx },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.webhooks.create(request.body)),
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { action: 'WebhookManage', ids: WEBHOOK, audit: 'config' },
      schema: {
        tags: TAGS,
        summary: 'Delete the webhook; its pending deliveries stop',
        params: WebhookIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...Errors4xx },
      },
    },
    async (request, reply) => {
      await deps.webhooks.delete(request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: { action: 'WebhookManage', ids: WEBHOOK },
      schema: {
        tags: TAGS,
        summary: 'Send one signed `webhook.test` message now; 200 with `delivered` true (status, latency) or false (error)',
        params: WebhookIdParams,
        response: { 200: WebhookTestResult, ...Errors4xx },
      },
    },
    async (request) => deps.webhooks.test(request.params.id),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { action: 'WebhookRead', ids: WEBHOOK },
      schema: {
        tags: TAGS,
        summary: 'Beyond the spec: the delivery log, every attempt newest first; `dead_letter` marks an event given up on',
        params: WebhookIdParams,
        querystring: WebhookDeliveriesQuery,
        response: { 200: WebhookDeliveryList, ...Errors4xx },
      },
    },
    async (request) => {
      const { limit, dead_letter } = request.query;
      return { deliveries: await deps.webhooks.deliveries(request.params.id, { limit: limit ?? 50, ...(dead_letter === undefined ? {} : { deadLetter: dead_letter }) }) };
    },
  );
};
