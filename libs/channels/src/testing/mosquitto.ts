import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as connectTcp } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { findBinary, freePort, waitUntil } from '@agent-platform/testkit';

export interface MosquittoHandle {
  /** `mqtt://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Stops the broker (SIGTERM, then SIGKILL) and removes its dir. */
  dispose(): Promise<void>;
}

/**
 * Spawns mosquitto on a free loopback port. With `users`, anonymous clients are refused and only
 * those username/password pairs connect (a password file made with mosquitto_passwd).
 */
export async function startMosquitto(
  options: { users?: Record<string, string> } = {},
): Promise<MosquittoHandle> {
  const binary = findBinary('mosquitto');
  if (!binary) throw new Error('mosquitto is not installed');
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mosquitto-test-'));
  const lines = [`listener ${port} 127.0.0.1`, 'persistence false', 'log_dest stderr'];
  // Started as root, mosquitto drops to the `mosquitto` user, which cannot read this private dir.
  if (process.getuid?.() === 0) lines.push('user root');
  const users = Object.entries(options.users ?? {});
  if (users.length > 0) {
    const passwd = findBinary('mosquitto_passwd');
    if (!passwd) throw new Error('mosquitto_passwd is not installed');
    const file = path.join(dir, 'passwords');
    await writeFile(file, '', { mode: 0o600 });
    for (const [user, password] of users) execFileSync(passwd, ['-b', file, user, password]);
    lines.push('allow_anonymous false', `password_file ${file}`);
  } else lines.push('allow_anonymous true');
  const configFile = path.join(dir, 'mosquitto.conf');
  await writeFile(configFile, `${lines.join('\n')}\n`);

  const child = spawn(binary, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  const log: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`mosquitto exited: ${log.join('')}`);
        return accepts(port);
      },
      { timeoutMs: 10_000, intervalMs: 20, message: 'mosquitto to listen' },
    );
  } catch (error) {
    await stop(child, exited);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async dispose() {
      await stop(child, exited);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
  await exited;
  clearTimeout(timer);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface MqttTestClient {
  /** Messages received on the topics given to `subscribe`, in order. */
  received: { topic: string; payload: string }[];
  subscribe(topic: string): Promise<void>;
  /** Publishes at QoS 1 and waits for the broker's PUBACK. */
  publish(topic: string, payload: string | object): Promise<void>;
  close(): Promise<void>;
}

/** A device or system on the other side of an mqtt channel. */
export async function connectMqttTestClient(
  url: string,
  auth: { username?: string; password?: string } = {},
): Promise<MqttTestClient> {
  const client: MqttClient = await connectAsync(url, {
    ...auth,
    reconnectPeriod: 0,
    clientId: `test-${process.pid}-${Math.random().toString(16).slice(2)}`,
  });
  const received: MqttTestClient['received'] = [];
  client.on('message', (topic, payload) => received.push({ topic, payload: payload.toString('utf8') }));
  return {
    received,
    subscribe: async (topic) => {
      await client.subscribeAsync(topic, { qos: 1 });
    },
    publish: async (topic, payload) => {
      await client.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), {
        qos: 1,
      });
    },
    close: () => client.endAsync(),
  };
}
