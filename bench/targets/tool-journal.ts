import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFleetFixture } from '../fleet-fixture.ts';
import { startPlatformFixture } from '../platform-fixture.ts';
import type { BenchProcess, BenchTarget, LoadResult, LoadSettings, StartedTarget } from '../target.ts';
import {
  invokeRequest,
  measureInvokeVariants,
  measureWorkflowVariants,
  startToolServers,
  toolConfig,
} from '../tool-journal.ts';
import { installToolPackages } from '../tool-packages.ts';
import { runRequest } from '../workflow-runs.ts';

/**
 * Issue 20: what the tool-call journal costs per state-changing call. Each target starts one
 * platform (all-in-one, or a fleet of 1 api + 1 agent worker over NATS), the bench MCP server
 * (bench/servers/mcp-tools.ts: `read_record` read-only, `write_record` not, both doing nothing)
 * and the OpenAI-protocol model stand-in answering at once (asks for the one tool the message
 * names, then quotes its answer). It sends ONE request at a time, whatever `--connections` says,
 * rotating blocks of the variants: no tool, one read-only call, one state-changing call (and, for
 * invoke, the two calls again without an idempotency key). The p50/p99 columns are the
 * state-changing variant's; every variant and the differences are in the details
 * (`journal_p50_ms` = state-changing minus read-only).
 */
type Path = 'invoke' | 'workflow';
type Topology = 'all-in-one' | 'fleet';

interface Platform {
  url: string;
  token: string;
  processes: BenchProcess[];
  stop(): Promise<void>;
}

async function startPlatform(
  topology: Topology,
  nodeFlags: string[],
  modelUrl: string | null,
): Promise<Platform> {
  if (topology === 'all-in-one') {
    const platform = await startPlatformFixture({
      nodeFlags,
      installAgent: false,
      extraConfig: toolConfig(modelUrl),
      providerIds: ['stand-in'],
    });
    return {
      url: platform.url,
      token: platform.token,
      processes: [{ role: 'platform', pid: platform.pid }],
      stop: platform.stop,
    };
  }
  const fleet = await startFleetFixture({
    nodeFlags,
    apis: 1,
    workers: 1,
    model: { kind: 'stand-in', delayMs: 0 },
    extraConfig: toolConfig(null),
  });
  return { url: fleet.urls[0]!, token: fleet.token, processes: fleet.processes, stop: fleet.stop };
}

async function startToolJournal(path: Path, topology: Topology, nodeFlags: string[]): Promise<StartedTarget> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-tool-journal-'));
  const cleanUp: Array<() => Promise<void>> = [() => rm(dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const step of cleanUp.splice(0).reverse()) await step();
  };
  try {
    // The all-in-one's model stand-in is started here; the fleet fixture starts its own.
    const servers = await startToolServers(dir, topology === 'all-in-one');
    cleanUp.push(servers.stop);
    const platform = await startPlatform(topology, nodeFlags, servers.modelUrl);
    cleanUp.push(platform.stop);
    const { agentId, workflowId } = await installToolPackages(
      platform.url,
      platform.token,
      join(dir, 'packages'),
      servers.mcpUrl,
    );
    const common = {
      url: platform.url,
      token: platform.token,
      mcpUrl: servers.mcpUrl,
      processes: platform.processes,
    };
    const measure = (settings: LoadSettings): Promise<LoadResult> =>
      path === 'invoke'
        ? measureInvokeVariants({ ...common, agentId, durationSecs: settings.durationSecs })
        : measureWorkflowVariants({ ...common, workflowId, durationSecs: settings.durationSecs });
    return {
      urls: [platform.url],
      processes: platform.processes,
      request:
        path === 'invoke' ? invokeRequest(agentId, platform.token) : runRequest(workflowId, platform.token),
      measure,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

const where = (topology: Topology) =>
  topology === 'all-in-one' ? 'all-in-one' : 'fleet (1 api + 1 agent worker over NATS)';

function target(path: Path, topology: Topology): BenchTarget {
  const what =
    path === 'invoke'
      ? 'POST /agents/{id}/invoke with an idempotency key (journal in the idempotency record)'
      : 'a one-step workflow run (journal in the run document)';
  return {
    name: `tool-journal-${path}-${topology}`,
    description: `${where(topology)}, ${what}, one at a time; model asks for no tool / one read-only / one state-changing MCP call${path === 'invoke' ? ' (/ both calls without a key)' : ''}; p50/p99 = state-changing`,
    start: ({ nodeFlags }) => startToolJournal(path, topology, nodeFlags),
  };
}

export const toolJournalInvokeAllInOne = target('invoke', 'all-in-one');
export const toolJournalInvokeFleet = target('invoke', 'fleet');
export const toolJournalWorkflowAllInOne = target('workflow', 'all-in-one');
export const toolJournalWorkflowFleet = target('workflow', 'fleet');
