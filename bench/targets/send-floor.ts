import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeProcess } from '../node-process.ts';
import { sendRequest } from '../platform-setup.ts';
import { FLOOR_AGENT_ID, FLOOR_API_KEY } from '../servers/send-floor-identity.ts';
import type { BenchTarget } from '../target.ts';

const DESCRIPTIONS = {
  file: 'the floor of a send: one synced record per send in an append-only file, state in memory',
  sqlite: 'the floor of a send: one synced record per send as one SQLite row, state in memory',
  store: "the floor's send with the platform's 10 writes through the embedded store (the platform's write shape)",
};

const SERVER = fileURLToPath(new URL('../servers/send-floor.ts', import.meta.url));

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
