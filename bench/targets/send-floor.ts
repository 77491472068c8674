import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNatsServer } from '@agent-platform/testkit';
import { startNodeProcess, type NodeProcess } from '../node-process.ts';
import { sendRequest } from '../platform-setup.ts';
import { FLOOR_AGENT_ID, FLOOR_API_KEY } from '../servers/send-floor-identity.ts';
import type { BenchTarget } from '../target.ts';

const DESCRIPTIONS = {
  file: 'the floor of a send: one synced record per send in an append-only file, state in memory',
  sqlite: 'the floor of a send: one synced record per send as one SQLite row, state in memory',
  store: "the floor's send with the platform's 10 writes through the embedded store (the platform's write shape)",
};

const SERVER = fileURLToPath(new URL('../servers/send-floor.ts', import.meta.url));
const FLEET_API = fileURLToPath(new URL('../servers/send-floor-fleet-api.ts', import.meta.url));
const FLEET_WORKER = fileURLToPath(new URL('../servers/send-floor-fleet-worker.ts', import.meta.url));

/**
 * The floor of a send with its guarantees, one durable record per send (bench/servers/send-floor.ts):
 * what the redesign of issue 23 could reach at best on this machine, measured beside the platform.
 */
function sendFloor(journal: 'file' | 'sqlite' | 'store'): BenchTarget {
  return {
    name: `send-floor-${journal}`,
    description: DESCRIPTIONS[journal],
    async start({ nodeFlags }) {
      const dir = await mkdtemp(join(tmpdir(), `ap-bench-floor-${journal}-`));
      const server = startNodeProcess({
        entry: SERVER,
        cwd: dir,
        nodeFlags,
        logFile: join(dir, 'output.log'),
        env: { FLOOR_JOURNAL: journal, FLOOR_DATA_DIR: dir },
      });
      const cleanUp = async (): Promise<void> => {
        await server.stop();
        await rm(dir, { recursive: true, force: true });
      };
      try {
        const url = await server.listening();
        return {
          urls: [url],
          processes: [{ role: `send-floor-${journal}`, pid: server.pid }],
          request: sendRequest(FLOOR_AGENT_ID, FLOOR_API_KEY),
          stop: cleanUp,
        };
      } catch (error) {
        await cleanUp();
        throw error;
      }
    },
  };
}

export const sendFloorFile = sendFloor('file');
export const sendFloorSqlite = sendFloor('sqlite');
export const sendFloorStore = sendFloor('store');

/**
 * The floor in `fleet-send`'s shape: nats-server, 2 floor api nodes and 2 floor workers (one SQLite
 * record per send, each worker in its own directory), autocannon spread over both api nodes. What
 * a fleet send could cost at best on this machine: each hop's HTTP or NATS framing and socket
 * writes, and the floor's work.
 */
export const sendFloorFleet: BenchTarget = {
  name: 'send-floor-fleet',
  description: "the floor of a send in fleet-send's shape: 2 floor api nodes, 2 floor workers (one SQLite record per send), core NATS",
  async start({ nodeFlags }) {
    const dir = await mkdtemp(join(tmpdir(), 'ap-bench-floor-fleet-'));
    const nats = await startNatsServer({ jetstream: false });
    const started: NodeProcess[] = [];
    const cleanUp = async (): Promise<void> => {
      await Promise.all(started.map((p) => p.stop()));
      await nats.dispose();
      await rm(dir, { recursive: true, force: true });
    };
    try {
      const start = async (role: string, entry: string, ready: (p: NodeProcess) => Promise<unknown>) => {
        const roleDir = join(dir, role);
        await mkdir(roleDir);
        const env = { FLOOR_JOURNAL: 'sqlite', FLOOR_DATA_DIR: roleDir, FLOOR_NATS_URL: nats.url };
        const p = startNodeProcess({ entry, cwd: roleDir, nodeFlags, logFile: join(roleDir, 'output.log'), env });
        started.push(p);
        await ready(p);
        return { role, p };
      };
      const workers = await Promise.all(['worker-1', 'worker-2'].map((role) => start(role, FLEET_WORKER, (p) => p.waitFor(/send-floor-worker listening/))));
      const apis = await Promise.all(['api-1', 'api-2'].map((role) => start(role, FLEET_API, (p) => p.listening())));
      const urls = await Promise.all(apis.map(({ p }) => p.listening()));
      return {
        urls,
        processes: [...apis, ...workers].map(({ role, p }) => ({ role, pid: p.pid })).concat([{ role: 'nats-server', pid: nats.pid()! }]),
        request: sendRequest(FLOOR_AGENT_ID, FLOOR_API_KEY),
        stop: cleanUp,
      };
    } catch (error) {
      await cleanUp();
      throw error;
    }
  },
};
