import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startNodeProcess, type NodeProcess } from './node-process.ts';
import { cpuMs } from './process-cpu.ts';
import type { BenchProcess, BenchRequest, LoadResult } from './target.ts';
import { callToolMessage, toolAnswer } from './tool-model.ts';
import { variantDetails, type VariantComparison, type VariantSample } from './variant-stats.ts';
import { runOnce } from './workflow-runs.ts';

// The driver of the tool-call journal targets (docs/performance.md "Tool-call journal (issue
// 20)"): the same invocation (or one-step workflow run) whose model makes ONE state-changing tool
// call, ONE read-only call, or none, sent one at a time in rotating blocks on one platform, so
// that the variants share the machine's moments and the journal's cost is their difference.

const MCP_TOOLS = fileURLToPath(new URL('./servers/mcp-tools.ts', import.meta.url));
const MODEL_STAND_IN = fileURLToPath(new URL('./servers/model-stand-in.ts', import.meta.url));

/** Requests of one variant in a row before the next variant's: the CPU time of each block is read from /proc. */
const BLOCK = 10;
const REQUEST_TIMEOUT_MS = 30_000;
/** What the bench MCP server answers to either tool. */
const TOOL_RESULT = '{"ok":true}';

/** The stand-ins outside the platform: the MCP server, and (all-in-one) the model. */
export interface ToolServers {
  mcpUrl: string;
  modelUrl: string | null;
  stop(): Promise<void>;
}

/** Starts the bench MCP server and, if asked, the model stand-in (answering at once), logging into `dir`. */
export async function startToolServers(dir: string, withModel: boolean): Promise<ToolServers> {
  const started: NodeProcess[] = [];
  const stop = async () => void (await Promise.all(started.map((p) => p.stop())));
  try {
    const mcp = startNodeProcess({ entry: MCP_TOOLS, cwd: dir, logFile: join(dir, 'mcp-tools.log') });
    started.push(mcp);
    const model = withModel
      ? startNodeProcess({
          entry: MODEL_STAND_IN,
          args: ['--delay-ms', '0'],
          cwd: dir,
          logFile: join(dir, 'model-stand-in.log'),
        })
      : null;
    if (model !== null) started.push(model);
    const [mcpUrl, modelUrl] = await Promise.all([mcp.listening(), model?.listening() ?? null]);
    return { mcpUrl, modelUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * What every platform of these targets needs besides the bench's defaults: the model stand-in as
 * the default model (the fleet fixture writes it itself), and private targets allowed, since the
 * MCP server listens on loopback (DECISIONS D9).
 */
export function toolConfig(modelUrl: string | null): string {
  const model =
    modelUrl === null
      ? ''
      : `\n[[providers]]\nid = "stand-in"\nkind = "openai"\nbase_url = "${modelUrl}"\nmodels = ["waits"]\n\n[models]\ndefault = "stand-in/waits"\n`;
  return `${model}\n[network]\nallow_private_targets = true\n`;
}

/** One variant of the request: what the model is asked to do, and what its answer must contain. */
interface Variant {
  name: string;
  message: (tag: string) => string;
  expect: string;
  /** Journaled calls the run must show (workflow runs). */
  journaled: number;
  /** Sent with an idempotency key (invoke). */
  keyed: boolean;
}

const read = (tag: string) => callToolMessage(tag, 'read_record', { id: tag });
const write = (tag: string) => callToolMessage(tag, 'write_record', { id: tag });
const READ_ANSWER = toolAnswer('read_record', TOOL_RESULT);
const WRITE_ANSWER = toolAnswer('write_record', TOOL_RESULT);
const VARIANTS: Record<'none' | 'read' | 'write' | 'read_nokey' | 'write_nokey', Variant> = {
  none: {
    name: 'none',
    message: (tag) => `${tag}: answer without tools`,
    expect: 'answer without tools',
    journaled: 0,
    keyed: true,
  },
  read: { name: 'read', message: read, expect: READ_ANSWER, journaled: 0, keyed: true },
  write: { name: 'write', message: write, expect: WRITE_ANSWER, journaled: 1, keyed: true },
  read_nokey: { name: 'read_nokey', message: read, expect: READ_ANSWER, journaled: 0, keyed: false },
  write_nokey: { name: 'write_nokey', message: write, expect: WRITE_ANSWER, journaled: 0, keyed: false },
};

/**
 * The comparisons reported: `journal` is what the issue asks (a state-changing call over a
 * read-only one, both journaled scopes: a key, a workflow step); `tool_call` what a read-only
 * call costs over none. For invoke without a key the journal only numbers the calls (no journal
 * writes, still the `started` audit entry): `unkeyed_journal` is what that leaves.
 */
const COMPARISONS: VariantComparison[] = [
  { name: 'journal', more: 'write', less: 'read' },
  { name: 'tool_call', more: 'read', less: 'none' },
  { name: 'unkeyed_journal', more: 'write_nokey', less: 'read_nokey' },
];

type Outcome =
  { kind: 'ok'; ms: number; extra?: number } | { kind: 'non2xx' | 'timeout' | 'error'; why: string };

/** `POST /agents/{id}/invoke` as the runner checks it once before the load (a state-changing call, keyed). */
export function invokeRequest(agentId: string, token: string): BenchRequest {
  return {
    method: 'POST',
    path: `/agents/${agentId}/invoke`,
    headers: headers(token),
    body: JSON.stringify(invokeBody(VARIANTS.write, 'bench check', `check-${randomUUID()}`)),
  };
}

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

function invokeBody(variant: Variant, tag: string, key: string): Record<string, unknown> {
  return {
    source: 'Api',
    message: variant.message(tag),
    correlation_id: `bench-${key}`,
    ...(variant.keyed ? { idempotency_key: key } : {}),
  };
}

/**
 * Invokes the agent for `durationSecs`, one request at a time on one keep-alive connection, the
 * five variants in rotating blocks; each answer must be 200 with the content its variant expects
 * (the model quoting the tool's answer), else the run is invalid.
 */
export async function measureInvokeVariants(input: {
  url: string;
  token: string;
  agentId: string;
  mcpUrl: string;
  processes: BenchProcess[];
  durationSecs: number;
}): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const run = randomUUID();
  try {
    return await measureVariants(Object.values(VARIANTS), input, async (variant, n) => {
      const tag = `bench ${n}`;
      const body = JSON.stringify(invokeBody(variant, tag, `${run}-${n}`));
      const sent = performance.now();
      const answer = await postOnce(
        agent,
        input.url,
        `/agents/${input.agentId}/invoke`,
        headers(input.token),
        body,
      );
      const ms = performance.now() - sent;
      if (answer.kind !== 'answered') return { kind: answer.kind, why: answer.why };
      if (answer.status !== 200) return { kind: 'non2xx', why: `${answer.status}: ${answer.text}` };
      const content = (JSON.parse(answer.text) as { content?: unknown }).content;
      if (typeof content !== 'string' || !content.includes(variant.expect))
        return { kind: 'error', why: `unexpected answer: ${answer.text}` };
      return { kind: 'ok', ms };
    });
  } finally {
    // Closes the connection from this side: the platform's graceful stop does not wait for it.
    agent.destroy();
  }
}

/**
 * Starts one-step runs for `durationSecs`, one at a time, the three variants in rotating blocks,
 * each watched to its end (the workflow targets' driver). A run must end Completed with the
 * output its variant expects and, for the state-changing variant, one call `answered` in its
 * `tool_calls`. Latency is the client's (POST sent to `end` received: the platform's own
 * timestamps have whole milliseconds); the platform's wall time is in the details.
 */
export async function measureWorkflowVariants(input: {
  url: string;
  token: string;
  workflowId: string;
  mcpUrl: string;
  processes: BenchProcess[];
  durationSecs: number;
}): Promise<LoadResult> {
  const variants = [VARIANTS.none, VARIANTS.read, VARIANTS.write];
  return measureVariants(variants, input, async (variant, n) => {
    const outcome = await runOnce(input.url, input.token, input.workflowId, variant.message(`bench ${n}`));
    if (outcome.kind !== 'ended') return { kind: outcome.kind, why: outcome.kind };
    const { run } = outcome;
    const calls = run.tool_calls ?? [];
    if (
      run.state !== 'Completed' ||
      run.completed_at === null ||
      !String(run.output ?? '').includes(variant.expect)
    )
      return { kind: 'error', why: `run ended ${run.state}: ${JSON.stringify(run)}` };
    if (calls.length !== variant.journaled || calls.some((c) => c.state !== 'answered'))
      return { kind: 'error', why: `journal ${JSON.stringify(calls)}` };
    return {
      kind: 'ok',
      ms: outcome.clientMs,
      extra: Date.parse(run.completed_at) - Date.parse(run.started_at),
    };
  });
}

/** The rotation, the CPU reads, the checks against the MCP server's counts, and the result. */
async function measureVariants(
  variants: Variant[],
  input: { mcpUrl: string; processes: BenchProcess[]; durationSecs: number },
  once: (variant: Variant, n: number) => Promise<Outcome>,
): Promise<LoadResult> {
  const samples = new Map<string, VariantSample & { extra: number[] }>(
    variants.map((v) => [v.name, { latenciesMs: [], cpuMs: 0, extra: [] }]),
  );
  const counts = { errors: 0, timeouts: 0, non2xx: 0 };
  const serverBefore = await mcpCounts(input.mcpUrl);
  const begin = performance.now();
  const endAt = begin + input.durationSecs * 1000;
  let n = 0;
  let cpu = total(await cpuMs(input.processes));
  let lastFailure = '';
  for (let block = 0; performance.now() < endAt; block++) {
    const variant = variants[block % variants.length]!;
    const sample = samples.get(variant.name)!;
    for (let i = 0; i < BLOCK; i++) {
      const outcome = await once(variant, n++);
      if (outcome.kind === 'ok') {
        sample.latenciesMs.push(outcome.ms);
        if (outcome.extra !== undefined) sample.extra.push(outcome.extra);
      } else {
        counts[outcome.kind === 'error' ? 'errors' : outcome.kind === 'timeout' ? 'timeouts' : 'non2xx']++;
        lastFailure = `${variant.name}: ${outcome.why}`;
      }
    }
    const now = total(await cpuMs(input.processes));
    sample.cpuMs += now - cpu;
    cpu = now;
  }
  const elapsedSecs = (performance.now() - begin) / 1000;
  const serverAfter = await mcpCounts(input.mcpUrl);
  if (lastFailure !== '') console.log(`  last failure: ${lastFailure.slice(0, 500)}`);

  const answered = (name: string) => samples.get(name)?.latenciesMs.length ?? 0;
  const calls = {
    read: serverAfter.read_record - serverBefore.read_record,
    write: serverAfter.write_record - serverBefore.write_record,
    keyed: serverAfter.write_record_keyed - serverBefore.write_record_keyed,
  };
  // Every answered request made exactly its one call, and every state-changing call carried a key.
  const miscounted =
    Math.abs(calls.read - answered('read') - answered('read_nokey')) +
    Math.abs(calls.write - answered('write') - answered('write_nokey')) +
    (calls.write - calls.keyed);
  if (miscounted > 0)
    console.log(
      `  the MCP server counted ${JSON.stringify(calls)} calls for ${JSON.stringify(Object.fromEntries([...samples].map(([k, v]) => [k, v.latenciesMs.length])))} answers`,
    );

  const details = variantDetails(samples, COMPARISONS);
  for (const [name, sample] of samples) {
    if (sample.extra.length === 0) continue;
    details[`${name}_server_mean_ms`] =
      Math.round((sample.extra.reduce((a, b) => a + b, 0) / sample.extra.length) * 100) / 100;
  }
  Object.assign(details, { mcp_read_calls: calls.read, mcp_write_calls: calls.write });
  const main = samples.get('write')!;
  const requests = [...samples.values()].reduce((sum, s) => sum + s.latenciesMs.length, 0);
  return {
    requests,
    throughputRps: requests / elapsedSecs,
    latencyP50Ms: details.write_p50_ms ?? 0,
    latencyP99Ms: details.write_p99_ms ?? 0,
    latencyMeanMs:
      main.latenciesMs.length === 0
        ? 0
        : main.latenciesMs.reduce((a, b) => a + b, 0) / main.latenciesMs.length,
    errors: counts.errors + miscounted,
    timeouts: counts.timeouts,
    non2xx: counts.non2xx,
    details,
  };
}

function total(byProcess: Map<string, number>): number {
  let sum = 0;
  for (const ms of byProcess.values()) sum += ms;
  return sum;
}

async function mcpCounts(
  mcpUrl: string,
): Promise<{ read_record: number; write_record: number; write_record_keyed: number }> {
  const res = await fetch(`${mcpUrl}/counts`, { headers: { connection: 'close' } });
  if (res.status !== 200) throw new Error(`GET ${mcpUrl}/counts answered ${res.status}`);
  return (await res.json()) as { read_record: number; write_record: number; write_record_keyed: number };
}

type Answer = { kind: 'answered'; status: number; text: string } | { kind: 'timeout' | 'error'; why: string };

/** One POST on the keep-alive agent; never rejects. */
function postOnce(
  agent: Agent,
  url: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<Answer> {
  return new Promise((resolve) => {
    const req = httpRequest(
      `${url}${path}`,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            kind: 'answered',
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', (error) => resolve({ kind: 'error', why: error.message }));
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => {
      req.destroy();
      resolve({ kind: 'timeout', why: `no answer within ${REQUEST_TIMEOUT_MS} ms` });
    });
    req.on('error', (error) => resolve({ kind: 'error', why: error.message }));
    req.end(body);
  });
}
