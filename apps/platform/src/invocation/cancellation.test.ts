import { request } from 'node:http';
import { waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHeldModel, type HeldModel } from '../testing/held-model.ts';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Issue "Hardening" 8: a client that went away stopped only the api's wait; the model call ran to
// its end and was charged. Its cancellation now reaches the worker running it (docs/invocation.md).
let api: PlatformTestApi | null = null;
let model: HeldModel;

beforeEach(async () => {
  model = await startHeldModel({ usage: { prompt_tokens: 100, completion_tokens: 100 } });
  api = await startPlatformTestApi({ config: model.config });
});
afterEach(async () => {
  await api?.close();
  api = null;
  await model.close();
});

/** Sends a POST and destroys the connection once `until` holds, like a client that gave up. */
async function sendAndHangUp(base: string, path: string, body: unknown, until: () => boolean): Promise<void> {
  const url = new URL(base);
  const payload = JSON.stringify(body);
  const req = request({
    hostname: url.hostname,
    port: url.port,
    path,
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
  });
  req.on('error', () => undefined);
  req.end(payload);
  await waitUntil(until, { message: 'the invocation reaching the model' });
  req.destroy();
}

describe('a client that disconnects', () => {
  for (const [route, body] of [
    ['send', { message: 'tell me everything' }],
    ['invoke', { source: 'Api', message: 'tell me everything', correlation_id: 'c-cancel', idempotency_key: 'cancel-me' }],
  ] as const) {
    it(`cancels its ${route}: the model call is stopped, nothing is charged, the key stays free`, async () => {
      const t = api!;
      const agent = await insertAgent(t);
      await sendAndHangUp(t.url, `/agents/${agent.id}/${route}`, body, () => model.server.requests.length === 1);
      await waitUntil(() => model.server.requests[0]!.cancelled, { message: 'the provider request being cancelled', timeoutMs: 5_000 });
      await waitUntil(async () => (await t.deps.agentStats.read(agent.id)).invocation_metrics.error_count === 1, {
        message: 'the invocation to be counted as failed',
      });
      expect((await t.request('GET', '/usage')).body).toMatchObject({ total_requests: 0, total_cost_usd: 0 });
      const status = (await t.request('GET', '/licence/status')).body;
      expect(status.cloud_spend?.spent_usd ?? 0).toBe(0);
      if (route === 'invoke') {
        // Not remembered: a retry with the same key runs.
        model.release();
        const retry = await t.request('POST', `/agents/${agent.id}/invoke`, { body });
        expect(retry.status).toBe(200);
        expect(retry.body.error).toBeUndefined();
      }
    });
  }
});
