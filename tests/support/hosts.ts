import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Hosts for multi-host tests on one machine: each "host" is a Linux network namespace with its own
 * address on a bridge, reached only over that bridge, and its own data dir on disk (nothing else
 * is shared with the other hosts but the filesystem the test reads its files from). The servers a
 * fleet talks to (NATS, Redis, PostgreSQL, the fake model provider) run in the test's own
 * namespace on the bridge's address (`gateway`). Needs root and iproute2 (`ip`).
 *
 *   bridge <prefix>br  gateway 10.213.N.1/24   (the test process, the servers)
 *     |- veth <prefix>v1 <-> eth0 in namespace <prefix>-1   10.213.N.11
 *     |- veth <prefix>v2 <-> eth0 in namespace <prefix>-2   10.213.N.12  ...
 *
 * Names carry the test process's pid, so a run killed before its teardown leaves namespaces that
 * the next run removes (`sweepStaleHosts`).
 */
export interface HostNetwork {
  /** The bridge's address in the test's namespace: where the servers listen. */
  readonly gateway: string;
  readonly hosts: readonly Host[];
  /** Adds one more host (namespace, veth, address, data dir). */
  add(name: string): Promise<Host>;
  /** Removes every namespace (killing what runs in it), the bridge and the data dirs. */
  close(): Promise<void>;
}

export interface Host {
  /** A name of the test's choosing, e.g. `api-1`. */
  readonly name: string;
  /** The network namespace (`ip netns exec <netns> ...`). */
  readonly netns: string;
  /** Its address on the bridge. */
  readonly address: string;
  /** Its own disk: `[storage] data_dir` and anything else the host writes. */
  readonly dataDir: string;
  /** Takes the host's link down: nothing in or out until `heal` (a partition). */
  partition(): Promise<void>;
  /** Brings the link back up. */
  heal(): Promise<void>;
  /** SIGKILLs every process in the namespace (the host dies) and waits until none is left. */
  killAll(): Promise<void>;
  /** The pids of the processes running in the namespace. */
  pids(): Promise<number[]>;
}

const PREFIX = 'aph';

/** Why this machine cannot make hosts (not root, no `ip`), or null when it can. */
export async function hostsUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    await run('ip', ['-V']);
  } catch {
    return 'iproute2 (`ip`) is not installed';
  }
  const probe = `${PREFIX}probe${process.pid}`;
  try {
    await ip('netns', 'add', probe);
    await ip('netns', 'del', probe);
  } catch (error) {
    return `cannot create a network namespace: ${(error as Error).message.split('\n')[0]}`;
  }
  return null;
}

/** Creates the bridge and `names.length` hosts on it. */
export async function createHostNetwork(names: readonly string[]): Promise<HostNetwork> {
  await sweepStaleHosts();
  const tag = `${PREFIX}${process.pid.toString(36)}`;
  const bridge = `${tag}br`;
  const subnet = await freeSubnet();
  const gateway = `${subnet}.1`;
  const hosts: Host[] = [];
  await ip('link', 'add', bridge, 'type', 'bridge');
  await ip('addr', 'add', `${gateway}/24`, 'dev', bridge);
  await ip('link', 'set', bridge, 'up');

  const add = async (name: string): Promise<Host> => {
    const index = hosts.length + 1;
    const netns = `${tag}-${index}`;
    const veth = `${tag}v${index}`;
    const address = `${subnet}.${10 + index}`;
    const dataDir = await mkdtemp(join(tmpdir(), `ap-host-${name}-`));
    await ip('netns', 'add', netns);
    await ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', `${veth}p`);
    await ip('link', 'set', veth, 'master', bridge, 'up');
    await ip('link', 'set', `${veth}p`, 'netns', netns);
    await ip('-n', netns, 'link', 'set', `${veth}p`, 'name', 'eth0');
    await ip('-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    await ip('-n', netns, 'link', 'set', 'eth0', 'up');
    await ip('-n', netns, 'link', 'set', 'lo', 'up');
    await ip('-n', netns, 'route', 'add', 'default', 'via', gateway);
    const pids = async (): Promise<number[]> => {
      const { stdout } = await run('ip', ['netns', 'pids', netns]).catch(() => ({ stdout: '' }));
      return stdout.split(/\s+/).filter(Boolean).map(Number);
    };
    const host: Host = {
      name,
      netns,
      address,
      dataDir,
      partition: () => ip('link', 'set', veth, 'down'),
      heal: () => ip('link', 'set', veth, 'up'),
      pids,
      async killAll() {
        for (let attempt = 0; attempt < 100; attempt++) {
          const alive = await pids();
          if (alive.length === 0) return;
          for (const pid of alive) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // already gone
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`host ${name}: processes still running after SIGKILL: ${(await pids()).join(', ')}`);
      },
    };
    hosts.push(host);
    return host;
  };

  try {
    for (const name of names) await add(name);
  } catch (error) {
    await teardown(tag, hosts);
    throw error;
  }
  return { gateway, hosts, add, close: () => teardown(tag, hosts) };
}

async function teardown(tag: string, hosts: readonly Host[]): Promise<void> {
  for (const host of hosts) {
    await host.killAll().catch(() => undefined);
    await ip('netns', 'del', host.netns).catch(() => undefined);
    await rm(host.dataDir, { recursive: true, force: true });
  }
  await ip('link', 'del', `${tag}br`).catch(() => undefined);
}

/** Removes the namespaces and bridges a killed earlier run left (their pid is gone). */
export async function sweepStaleHosts(): Promise<void> {
  const { stdout: namespaces } = await run('ip', ['netns', 'list']);
  const { stdout: links } = await run('ip', ['-o', 'link', 'show']);
  const stale = (tag: string): boolean => {
    const pid = Number.parseInt(tag.slice(PREFIX.length), 36);
    if (!Number.isSafeInteger(pid) || pid === process.pid) return false;
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  };
  for (const line of namespaces.split('\n')) {
    const netns = line.split(' ')[0] ?? '';
    const match = new RegExp(`^(${PREFIX}[0-9a-z]+)-\\d+$`).exec(netns);
    if (match !== null && stale(match[1]!)) {
      const { stdout } = await run('ip', ['netns', 'pids', netns]).catch(() => ({ stdout: '' }));
      for (const pid of stdout.split(/\s+/).filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
      await ip('netns', 'del', netns).catch(() => undefined);
    }
  }
  for (const match of links.matchAll(new RegExp(`\\d+: (${PREFIX}[0-9a-z]+)br[:@]`, 'g'))) {
    if (stale(match[1]!)) await ip('link', 'del', `${match[1]}br`).catch(() => undefined);
  }
}

/** A 10.213.N.0/24 subnet no interface of this machine is on. */
async function freeSubnet(): Promise<string> {
  const { stdout } = await run('ip', ['-o', '-4', 'addr', 'show']);
  for (let attempt = 0; attempt < 200; attempt++) {
    const subnet = `10.213.${(process.pid + attempt) % 250}`;
    if (!stdout.includes(` ${subnet}.`)) return subnet;
  }
  throw new Error('no free 10.213.N.0/24 subnet for the test hosts');
}

async function ip(...args: string[]): Promise<void> {
  try {
    await run('ip', args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`ip ${args.join(' ')}: ${stderr.trim() || (error as Error).message}`, { cause: error });
  }
}
