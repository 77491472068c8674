import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_CLAIM_NUMBER_PATTERNS,
  DEFAULT_PII_CATEGORIES,
  DEFAULT_POLICY_NUMBER_PATTERNS,
  type PlatformConfig,
} from '@agent-platform/contracts';
import { corpusMessage, leakedValues } from '@agent-platform/privacy/testing';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAuditTrail } from '../audit/audit-trail.ts';
import type { AuditTrail } from '../audit/audit-entry.ts';
import { PlatformError } from '../errors/platform-error.ts';
import type { CompletionRequest, CompletionResult, ModelProvider } from '../models/model-provider.ts';
import { createModelRegistry } from '../models/model-registry.ts';
import { runToolLoop, type ToolBinding } from '../models/tool-loop.ts';
import { fixedClock } from '../time/clock.ts';
import { createGatewayTraffic } from './gateway-traffic.ts';
import { createModelGateway, type ModelGateway } from './model-gateway.ts';
import { createPrivacyAudit, type PrivacyAudit } from './privacy-audit.ts';
import type { GatewaySettings } from './routing-policy.ts';

/** A provider answering from a script (or echoing the last user message), keeping a copy of every request. */
function scripted(
  id: string,
  ...replies: Array<Partial<CompletionResult> | Error>
): ModelProvider & { seen: CompletionRequest[] } {
  const seen: CompletionRequest[] = [];
  return {
    id,
    kind: id === 'local' ? 'local' : 'openai',
    models: () => [id === 'local' ? 'echo' : 'm'],
    seen,
    complete: async (request, options) => {
      seen.push(structuredClone(request));
      const reply = replies.shift() ?? {
        content: request.messages.findLast((m) => m.role === 'user')?.content ?? '',
      };
      if (reply instanceof Error) throw reply;
      if (reply.content !== undefined)
        for (const piece of reply.content.match(/.{1,3}/gs) ?? []) options?.onToken?.(piece);
      return {
        content: '',
        tool_calls: [],
        usage: { input_tokens: 1, output_tokens: 1 },
        finish_reason: 'stop',
        ...reply,
      };
    },
  };
}

const gatewayConfig = (over: Partial<PlatformConfig['gateway']> = {}): PlatformConfig['gateway'] => ({
  enabled: true,
  categories: [...DEFAULT_PII_CATEGORIES],
  forced_local: false,
  local_model: '',
  when_no_local: 'refuse',
  policy_number_patterns: DEFAULT_POLICY_NUMBER_PATTERNS,
  claim_number_patterns: DEFAULT_CLAIM_NUMBER_PATTERNS,
  traffic_retention_hours: 24,
  ...over,
});

let dir: string;
let store: Store;
let audit: AuditTrail;
let privacy: PrivacyAudit;
const clock = fixedClock('2026-11-01T10:00:00.000Z');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gateway-'));
  // The store's clock is the test's: traffic decisions expire by it.
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => clock.now() });
  audit = createAuditTrail({ store, clock, enabled: true });
  privacy = createPrivacyAudit({ audit, counters: store.counters });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

interface Setup {
  gateway: ModelGateway;
  cloud: ReturnType<typeof scripted>;
  onprem: ReturnType<typeof scripted>;
}

/** A cloud provider `oa` (the default) and an on-premises one `vllm`, local-eligible when asked. */
function setup(
  options: {
    gateway?: Partial<PlatformConfig['gateway']>;
    onpremEligible?: boolean;
    cloud?: Array<Partial<CompletionResult> | Error>;
    auditOff?: boolean;
  } = {},
): Setup {
  const cloud = scripted('oa', ...(options.cloud ?? []));
  const onprem = scripted('vllm');
  const settings: GatewaySettings = {
    gateway: gatewayConfig(options.gateway),
    providers: [
      { id: 'oa', kind: 'openai', base_url: 'http://cloud.example/v1', models: ['m'] },
      {
        id: 'vllm',
        kind: 'openai',
        base_url: 'http://127.0.0.1:8000/v1',
        models: ['m'],
        local_eligible: options.onpremEligible ?? false,
      },
    ],
    models: { default: 'oa/m' },
  };
  const trail = options.auditOff === true ? createAuditTrail({ store, clock, enabled: false }) : audit;
  const gateway = createModelGateway({
    models: createModelRegistry({ providers: [scripted('local'), cloud, onprem], defaultKey: 'oa/m' }),
    settings: () => settings,
    audit: createPrivacyAudit({ audit: trail, counters: store.counters }),
    traffic: createGatewayTraffic(store, () => clock.now()),
    clock,
  });
  return { gateway, cloud, onprem };
}

const request = (message: string, history: CompletionRequest['messages'] = []) => ({
  messages: [
    { role: 'system' as const, content: 'You are the claims assistant. Our office: claims@acme.example.' },
    ...history,
    { role: 'user' as const, content: message },
  ],
  agent_id: 'agent-1',
  correlation_id: 'corr-1',
  identity: 'ops',
  role: 'operator',
});

/** Runs one invocation's model request through the gateway, as invocation-execution.ts does. */
async function run(
  gateway: ModelGateway,
  message: string,
  extra: {
    tools?: ToolBinding[];
    onToken?: (t: string) => void;
    history?: CompletionRequest['messages'];
  } = {},
) {
  const session = await gateway.open(request(message, extra.history));
  try {
    const loop = await runToolLoop({
      provider: session.model.provider,
      request: { model: session.model.model, messages: request(message, extra.history).messages },
      ...(extra.tools === undefined ? {} : { tools: extra.tools }),
      ...(extra.onToken === undefined ? {} : { onToken: extra.onToken }),
      clock,
    });
    await session.completed();
    return { session, loop };
  } catch (error) {
    await session.failed(false);
    throw error;
  }
}

const privacyEntries = async () => (await audit.query({ limit: 100, category: 'privacy' })).reverse();

describe('the privacy gateway at the model call', () => {
  it('sends the model tokens only, and gives the caller the values back (reply, stream, tool arguments)', async () => {
    const { gateway, cloud } = setup();
    const message = corpusMessage();
    const history = [
      { role: 'user' as const, content: 'Earlier I wrote from old.address@example.com' },
      { role: 'assistant' as const, content: 'Noted old.address@example.com' },
    ];
    const streamed: string[] = [];
    const { session, loop } = await run(gateway, message, { history, onToken: (t) => streamed.push(t) });
    const sent = JSON.stringify(cloud.seen);
    expect(leakedValues(sent)).toEqual([]);
    expect(sent).not.toContain('old.address@example.com');
    // The system prompt is the operator's, left as written.
    expect(cloud.seen[0]!.messages[0]!.content).toContain('claims@acme.example');
    expect(loop.content).toBe(message);
    expect(streamed.join('')).toBe(message);
    expect(session.piiTokenized()).toBe(true);
  });

  it('hydrates tool-call arguments, so the tool gets the real value, and keeps the same token across rounds', async () => {
    const { gateway, cloud } = setup({
      cloud: [
        // The model asks the tool about the policy number it was shown as a token.
        { tool_calls: [{ id: 'c1', name: 'lookup', arguments: 'PLACEHOLDER' }], finish_reason: 'tool_calls' },
        { content: 'done' },
      ],
    });
    const got: unknown[] = [];
    const lookup: ToolBinding = {
      skill_id: 'crm',
      spec: { name: 'lookup', description: 'look a policy up', input_schema: { type: 'object' } },
      execute: async (args) => {
        got.push(args);
        return 'Holder email: holder@example.com, policy POL-123456';
      },
    };
    // The script's tool call must carry the token the model saw: patch it in from the first request.
    const complete = cloud.complete.bind(cloud);
    cloud.complete = async (req, opts) => {
      const token = /\[\[PII:POLICY:[0-9a-f]{4}\]\]/.exec(req.messages.at(-1)!.content)?.[0];
      const reply = await complete(req, opts);
      return reply.tool_calls.length > 0
        ? {
            ...reply,
            tool_calls: [
              { id: 'c1', name: 'lookup', arguments: JSON.stringify({ policy: token, note: 'for "x"' }) },
            ],
          }
        : reply;
    };
    const { loop } = await run(gateway, 'Please check policy POL-123456', { tools: [lookup] });
    expect(got).toEqual([{ policy: 'POL-123456', note: 'for "x"' }]);
    expect(loop.content).toBe('done');
    const second = cloud.seen[1]!;
    const sent = JSON.stringify(second);
    expect(sent).not.toContain('POL-123456');
    expect(sent).not.toContain('holder@example.com');
    // The tool's output carried the same policy number: it got the same token as in the question.
    const token = /\[\[PII:POLICY:[0-9a-f]{4}\]\]/.exec(cloud.seen[0]!.messages.at(-1)!.content)![0];
    expect(second.messages.at(-1)!.content).toContain(token);
    expect(JSON.parse(second.messages.at(-2)!.tool_calls![0]!.arguments)).toEqual({
      policy: token,
      note: 'for "x"',
    });
  });

  it('audits routing, tokenised and hydrated with counts and categories only, and counts them', async () => {
    const { gateway } = setup();
    await run(gateway, 'Mail john.smith@example.com or jane@example.com, card 4111 1111 1111 1111');
    const entries = await privacyEntries();
    expect(entries.map((e) => [e.action, e.identity, e.role, e.target, e.result])).toEqual([
      ['gateway.routing', 'ops', 'operator', 'agent:agent-1', 'routed'],
      ['gateway.pii.tokenised', 'ops', 'operator', 'agent:agent-1', 'success'],
      ['gateway.pii.hydrated', 'ops', 'operator', 'agent:agent-1', 'success'],
    ]);
    expect(entries[0]!.metadata).toEqual({
      pii_detected: true,
      pii_categories: ['payment_card', 'email'],
      local_eligible: false,
      forced_local: false,
      rerouted: false,
      requested_provider: 'oa',
      requested_model: 'm',
      provider: 'oa',
      model: 'm',
      correlation_id: 'corr-1',
    });
    expect(entries[1]!.metadata).toEqual({
      count: 3,
      categories: { email: 2, payment_card: 1 },
      provider: 'oa',
      model: 'm',
      correlation_id: 'corr-1',
    });
    // The echo gave back all three tokens.
    expect(entries[2]!.metadata).toEqual({
      count: 3,
      categories: { email: 2, payment_card: 1 },
      correlation_id: 'corr-1',
    });
    expect(await privacy.piiCoverage()).toEqual({ coverage_pct: 100, tokenised: 1, hydrated: 1 });
  });

  it('writes hydrated even when the reply held no token, and none after a provider failure', async () => {
    const { gateway } = setup({
      cloud: [
        { content: 'Thanks, noted.' },
        new PlatformError('ProviderError', "provider 'oa': answered HTTP 500"),
      ],
    });
    await run(gateway, 'my email is a@example.com');
    await expect(run(gateway, 'my email is b@example.com')).rejects.toThrow('HTTP 500');
    const actions = (await privacyEntries()).map((e) => [e.action, e.metadata?.count]);
    expect(actions).toEqual([
      ['gateway.routing', undefined],
      ['gateway.pii.tokenised', 1],
      ['gateway.pii.hydrated', 0],
      ['gateway.routing', undefined],
      ['gateway.pii.tokenised', 1],
    ]);
    expect(await privacy.piiCoverage()).toEqual({ coverage_pct: 50, tokenised: 2, hydrated: 1 });
    const traffic = await createGatewayTraffic(store, () => clock.now()).recent(10);
    expect(traffic.map((d) => d.outcome).sort()).toEqual(['failed', 'ok']);
  });

  it('writes no tokenised entry for a request without personal data', async () => {
    const { gateway } = setup();
    const { session } = await run(gateway, 'A tree fell on my car on 14/03/2024.');
    expect(session.piiTokenized()).toBe(false);
    expect((await privacyEntries()).map((e) => e.action)).toEqual(['gateway.routing']);
    expect((await privacyEntries())[0]!.metadata).toMatchObject({ pii_detected: false, pii_categories: [] });
    expect(await privacy.piiCoverage()).toEqual({ coverage_pct: 100, tokenised: 0, hydrated: 0 });
  });
});

describe('routing', () => {
  it('forced_local: personal data goes to the local-eligible provider, the cloud one gets nothing', async () => {
    const { gateway, cloud, onprem } = setup({ gateway: { forced_local: true }, onpremEligible: true });
    const { session, loop } = await run(gateway, 'call me on 4155550199');
    expect(session.model.provider.id).toBe('vllm');
    expect(cloud.seen).toHaveLength(0);
    expect(onprem.seen).toHaveLength(1);
    // Tokenised there too: the gateway never sends a value, local or not.
    expect(JSON.stringify(onprem.seen)).not.toContain('4155550199');
    expect(loop.content).toBe('call me on 4155550199');
    expect((await privacyEntries())[0]!.metadata).toMatchObject({
      pii_detected: true,
      local_eligible: true,
      forced_local: true,
      rerouted: true,
      requested_provider: 'oa',
      provider: 'vllm',
    });
    expect(await privacy.forcedLocalRouting()).toEqual({
      forced_local: 1,
      local_eligible: 1,
      pct_of_local_eligible: 100,
      target_pct: 85,
    });
  });

  it('forced_local: a request without personal data goes where it was aimed', async () => {
    const { gateway, cloud, onprem } = setup({ gateway: { forced_local: true }, onpremEligible: true });
    await run(gateway, 'what does my cover include?');
    expect(cloud.seen).toHaveLength(1);
    expect(onprem.seen).toHaveLength(0);
    expect(await privacy.forcedLocalRouting()).toEqual({
      forced_local: 0,
      local_eligible: 0,
      pct_of_local_eligible: null,
      target_pct: 85,
    });
  });

  it('without forced_local, personal data goes to the configured model (tokenised), counted as eligible but not forced', async () => {
    const { gateway, cloud, onprem } = setup({ onpremEligible: true });
    await run(gateway, 'call me on 4155550199');
    expect(cloud.seen).toHaveLength(1);
    expect(onprem.seen).toHaveLength(0);
    expect(await privacy.forcedLocalRouting()).toEqual({
      forced_local: 0,
      local_eligible: 1,
      pct_of_local_eligible: 0,
      target_pct: 85,
    });
  });

  it('forced_local with no local-eligible model refuses with PermissionDenied and sends nothing (when_no_local = refuse)', async () => {
    const { gateway, cloud, onprem } = setup({ gateway: { forced_local: true } });
    const error = await gateway.open(request('call me on 4155550199')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({
      category: 'PermissionDenied',
      details: { reason: 'no_local_model', pii_categories: ['phone'] },
    });
    expect((error as Error).message).not.toContain('4155550199');
    expect(cloud.seen).toHaveLength(0);
    expect(onprem.seen).toHaveLength(0);
    const [entry] = await privacyEntries();
    expect(entry).toMatchObject({
      action: 'gateway.routing',
      result: 'refused',
      metadata: { pii_detected: true, local_eligible: false, forced_local: false, provider: null },
    });
    // Not eligible: it counts in neither figure.
    expect(await privacy.forcedLocalRouting()).toMatchObject({ forced_local: 0, local_eligible: 0 });
    expect((await createGatewayTraffic(store, () => clock.now()).recent(1))[0]).toMatchObject({
      outcome: 'refused',
      provider: null,
    });
  });

  it('forced_local with no local-eligible model sends it tokenised to the configured model (when_no_local = send_tokenised)', async () => {
    const { gateway, cloud } = setup({ gateway: { forced_local: true, when_no_local: 'send_tokenised' } });
    const { loop } = await run(gateway, 'call me on 4155550199');
    expect(cloud.seen).toHaveLength(1);
    expect(JSON.stringify(cloud.seen)).not.toContain('4155550199');
    expect(loop.content).toBe('call me on 4155550199');
    expect((await privacyEntries())[0]!.metadata).toMatchObject({
      pii_detected: true,
      local_eligible: false,
      forced_local: false,
      provider: 'oa',
    });
  });

  it('a local_model names the target: the built-in echo only when named', async () => {
    const named = setup({ gateway: { forced_local: true, local_model: 'local/echo' } });
    expect((await run(named.gateway, 'call me on 4155550199')).session.model.provider.id).toBe('local');
  });
});

describe('switched off', () => {
  it('[gateway] enabled = false: the configured model gets the message as it is, nothing is recorded', async () => {
    const { gateway, cloud } = setup({ gateway: { enabled: false } });
    const { session } = await run(gateway, 'call me on 4155550199');
    expect(JSON.stringify(cloud.seen)).toContain('4155550199');
    expect(session.piiTokenized()).toBe(false);
    expect(await privacyEntries()).toEqual([]);
    expect(await createGatewayTraffic(store, () => clock.now()).recent(10)).toEqual([]);
  });

  it('no category configured: routing entries carry no detected-PII metadata and count in neither figure', async () => {
    const { gateway } = setup({ gateway: { categories: [] } });
    await run(gateway, 'call me on 4155550199');
    const [entry] = await privacyEntries();
    expect(entry!.metadata).not.toHaveProperty('pii_detected');
    expect(entry!.metadata).not.toHaveProperty('pii_categories');
    expect(await privacy.forcedLocalRouting()).toMatchObject({
      forced_local: 0,
      local_eligible: 0,
      pct_of_local_eligible: null,
    });
  });

  it('[audit] enabled = false: still tokenised, nothing audited, the figures answer the disabled shapes', async () => {
    const { gateway, cloud } = setup({ auditOff: true });
    await run(gateway, 'call me on 4155550199');
    expect(JSON.stringify(cloud.seen)).not.toContain('4155550199');
    expect(await audit.count()).toBe(0);
    const off = createPrivacyAudit({
      audit: createAuditTrail({ store, clock, enabled: false }),
      counters: store.counters,
    });
    expect(await off.piiCoverage()).toEqual({
      coverage_pct: null,
      tokenised: 0,
      hydrated: 0,
      status: 'disabled',
    });
    expect(await off.forcedLocalRouting()).toEqual({
      forced_local: 0,
      local_eligible: 0,
      pct_of_local_eligible: null,
      target_pct: 85,
      status: 'disabled',
    });
  });
});
