import { randomUUID } from 'node:crypto';
import type { Webhook, WebhookCreateBody, WebhookCreated, WebhookDelivery, WebhookTestResult } from '@agent-platform/contracts';
import { checkUrlTarget, newWebhookSecret, PrivateTargetError } from '@agent-platform/net';
import type { Store } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import { createDeliveryLog, type DeliveryLog } from './delivery-log.ts';
import { attemptDelivery, type WebhookMessage, type WebhookTransport } from './webhook-attempt.ts';
import { webhookCollection, webhookView, type WebhookRecord } from './webhook-record.ts';
import type { WebhookSecrets } from './webhook-secrets.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The webhook routes (spec §Webhooks, docs/webhooks.md). */
export interface WebhookService {
  /** Oldest first. */
  list(): Promise<Webhook[]>;
  /** Validates everything before writing; the secret is in the answer only. */
  create(input: WebhookCreateBody): Promise<WebhookCreated>;
  /** `NotFound` when absent. Pending deliveries find it gone and stop. */
  delete(id: string): Promise<void>;
  /** One signed `webhook.test` message, sent now, recorded in the delivery log. */
  test(id: string): Promise<WebhookTestResult>;
  deliveries(id: string, query: { limit: number; deadLetter?: boolean }): Promise<WebhookDelivery[]>;
}

export interface WebhookSettings {
  /** `[network] allow_private_targets` (DECISIONS D9). */
  allow_private_targets: boolean;
  /** `[webhooks] log_retention_days`. */
  log_retention_days: number;
}

export interface WebhookServiceDeps {
  store: Store;
  agents: AgentStore;
  clock: Clock;
  secrets: WebhookSecrets;
  transport: WebhookTransport;
  settings: () => WebhookSettings;
}

export function webhookDeliveryLog(deps: { store: Store; clock: Clock; settings: () => { log_retention_days: number } }): DeliveryLog {
  return createDeliveryLog(deps.store, deps.clock, () => deps.settings().log_retention_days);
}

export function createWebhookService(deps: WebhookServiceDeps): WebhookService {
  const webhooks = webhookCollection(deps.store);
  const log = webhookDeliveryLog(deps);

  const load = async (id: string): Promise<WebhookRecord> => {
    const found = await webhooks.get(id);
    if (found === null) throw Errors.notFound('webhook', id);
    return found.doc;
  };

  return {
    async list() {
      const found = await webhooks.find({ orderBy: { field: 'created_at', direction: 'asc' } });
      return found.map(({ doc }) => webhookView(doc));
    },

    async create(input) {
      if (!UUID.test(input.agent_id)) throw Errors.invalidId('agent', input.agent_id);
      const url = parseTarget(input.url, deps.settings().allow_private_targets);
      if ((await deps.agents.get(input.agent_id)) === null) throw Errors.notFound('agent', input.agent_id);
      const id = randomUUID();
      const secret = newWebhookSecret();
      await webhooks.insert({
        id,
        agent_id: input.agent_id,
        url,
        created_at: deps.clock.now().toISOString(),
        secret_sealed: deps.secrets.seal(id, secret),
      });
      return { id, secret };
    },

    async delete(id) {
      if (!(await webhooks.delete(id))) throw Errors.notFound('webhook', id);
    },

    async test(id) {
      const record = await load(id);
      const message: WebhookMessage = {
        id: `msg_test_${randomUUID()}`,
        kind: 'webhook.test',
        event_id: null,
        body: JSON.stringify({
          type: 'webhook.test',
          timestamp: deps.clock.now().toISOString(),
          data: { webhook_id: record.id, agent_id: record.agent_id, message: 'A test delivery from POST /webhooks/{id}/test.' },
        }),
      };
      const target = { webhook_id: record.id, url: record.url, secret: deps.secrets.open(record) };
      const outcome = await attemptDelivery({ transport: deps.transport, log, clock: deps.clock }, target, message, { number: 1, last: false });
      if (outcome.delivered && outcome.status_code !== null)
        return { delivered: true, status_code: outcome.status_code, latency_ms: outcome.latency_ms };
      return { delivered: false, error: outcome.error ?? 'not delivered' };
    },

    async deliveries(id, query) {
      await load(id);
      return log.list(id, query);
    },
  };
}

/**
 * An absolute http(s) URL, normalized by the URL parser (so `http://2130706433/` is seen as
 * `http://127.0.0.1/`). IP literals and `localhost` names that D9 calls private are refused here;
 * other names are checked at every delivery, after DNS resolution.
 */
function parseTarget(text: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw Errors.validation(`url '${truncate(text)}' is not an absolute URL`, { field: 'url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw Errors.validation(`url must be http or https, not ${url.protocol.replace(/:$/, '')}`, { field: 'url' });
  try {
    checkUrlTarget(url, allowPrivate);
  } catch (error) {
    if (error instanceof PrivateTargetError) throw Errors.validation(`url refused: ${error.message}`, { field: 'url' });
    throw error;
  }
  return url.href;
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
