import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeProcess } from '../node-process.ts';
import type { BenchTarget } from '../target.ts';

const SERVER = fileURLToPath(new URL('../servers/hello-world.ts', import.meta.url));

/** The baseline: fastify hello world in its own process, same Node and loader as the platform. */
export const helloWorld: BenchTarget = {
  name: 'hello-world',
  description: 'fastify hello world, GET / -> {hello:"world"} (the baseline)',
  async start({ nodeFlags }) {
    const dir = await mkdtemp(join(tmpdir(), 'ap-bench-hello-'));
    const server = startNodeProcess({ entry: SERVER, cwd: dir, nodeFlags, logFile: join(dir, 'output.log') });
    try {
      const url = await server.listening();
      return {
        urls: [url],
        processes: [{ role: 'hello-world', pid: server.pid }],
        request: { method: 'GET', path: '/' },
        async stop() {
          await server.stop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  },
};
