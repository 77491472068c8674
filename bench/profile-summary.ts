import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ROOT } from './node-process.ts';

// `npx tsx bench/profile-summary.ts <file.cpuprofile> [--top n] [--skip-secs s]`: where a
// profiled target (`npm run bench -- --profile`) spent its CPU, by function (self and inclusive)
// and by area (a package in node_modules, a workspace directory, Node internals, GC).
// `--skip-secs` drops the first seconds of the profile (boot, install, warm-up).

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, 'skip-secs': { type: 'string', default: '0' } },
});
const top = Number(values.top);
const skipUs = Number(values['skip-secs']) * 1e6;
if (positionals.length !== 1) {
  console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [--top n] [--skip-secs s]');
  process.exit(2);
}
const profile = JSON.parse(await readFile(positionals[0]!, 'utf8')) as CpuProfile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}
/** Function identity: name and source location, relative to the repository. */
function frameKey(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return url === ''
    ? `${functionName || '(anonymous)'}`
    : `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
}
/** Area: the package of a node_modules file, the workspace directory of ours, else Node or the VM. */
function areaOf(node: ProfileNode): string {
  const url = shortUrl(node.callFrame.url);
  if (url === '') return node.callFrame.functionName; // (garbage collector), (idle), (program)
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg !== undefined) return pkg;
  const workspace = /^((?:apps|libs)\/[^/]+)/.exec(url)?.[1];
  if (workspace !== undefined) return workspace;
  return url.startsWith('node:') ? 'node internals' : url;
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const areas = new Map<string, number>();
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
let total = 0;
let elapsed = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  elapsed += us;
  const leaf = byId.get(id);
  if (leaf === undefined || elapsed < skipUs) return;
  total += us;
  add(self, frameKey(leaf), us);
  add(areas, areaOf(leaf), us);
  const seen = new Set<string>();
  for (let n: ProfileNode | undefined = leaf; n !== undefined; n = byId.get(parent.get(n.id) ?? -1)) {
    const key = frameKey(n);
    if (!seen.has(key)) add(inclusive, key, us);
    seen.add(key);
  }
});

function print(title: string, map: Map<string, number>): void {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((100 * us) / total).toFixed(1).padStart(6)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`,
    );
  }
}
console.log(`${positionals[0]}: ${(total / 1e6).toFixed(1)} s sampled`);
print('Self time by area', areas);
print('Self time by function', self);
print('Inclusive time by function', inclusive);
