import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isValid, runLoad } from './load.ts';
import { readRssBytes, ROOT } from './node-process.ts';
import { startPlatformFixture } from './platform-fixture.ts';
import { sendRequest } from './platform-setup.ts';
import { soakVerdict, type SoakSample } from './soak-verdict.ts';

// `npm run bench:soak [-- --minutes 10 --connections 4 --interval 30]`: the all-in-one send path
// under a steady load for minutes, sampled every interval (throughput, p50/p99 of that interval,
// the platform's RSS), then a verdict on whether RSS and p99 stayed flat (soak-verdict.ts) and
// how many audit entries each send left. Results: bench/results/<stamp>-soak.json and .md.
const USAGE = `Usage: npm run bench:soak -- [--minutes <n>] [--connections <n>] [--interval <secs>]`;

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    connections: { type: 'string', default: '4' },
    interval: { type: 'string', default: '30' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const minutes = Number(values.minutes);
const connections = Number(values.connections);
const intervalSecs = Number(values.interval);
if (!(minutes > 0) || !Number.isInteger(connections) || connections < 1 || !Number.isInteger(intervalSecs) || intervalSecs < 5) {
  console.error(`--minutes > 0, --connections >= 1 and --interval >= 5 (seconds) are needed\n${USAGE}`);
  process.exit(2);
}

const platform = await startPlatformFixture({ nodeFlags: [], installAgent: true });
const samples: SoakSample[] = [];
let sends = 0;
try {
  const request = sendRequest(platform.agentId!, platform.token);
  const rounds = Math.max(1, Math.round((minutes * 60) / intervalSecs));
  for (let round = 1; round <= rounds; round++) {
    const result = await runLoad([platform.url], request, { connections, durationSecs: intervalSecs, pipelining: 1 });
    if (!isValid(result)) throw new Error(`round ${round} was not clean: ${JSON.stringify(result)}`);
    sends += result.requests;
    const rssBytes = await readRssBytes(platform.pid);
    const sample: SoakSample = {
      atSecs: round * intervalSecs,
      throughputRps: result.throughputRps,
      p50Ms: result.latencyP50Ms,
      p99Ms: result.latencyP99Ms,
      rssMb: rssBytes === null ? null : rssBytes / 2 ** 20,
    };
    samples.push(sample);
    console.log(
      `${String(sample.atSecs).padStart(5)} s  ${sample.throughputRps.toFixed(0).padStart(6)} req/s  p50 ${sample.p50Ms.toFixed(2)} ms  p99 ${sample.p99Ms.toFixed(2)} ms  RSS ${sample.rssMb?.toFixed(0) ?? 'n/a'} MB`,
    );
  }
  const audit = await fetch(`${platform.url}/security/verify`, { headers: { authorization: `Bearer ${platform.token}` } });
  const verified = (await audit.json()) as { valid?: boolean | null; entry_count?: number };
  const entries = verified.entry_count ?? null;
  const verdict = soakVerdict(samples);
  const lines = [
    `Soak ${new Date().toISOString()}: all-in-one send, ${connections} connections, ${minutes} min, a sample every ${intervalSecs} s.`,
    '',
    '| at s | req/s | p50 ms | p99 ms | RSS MB |',
    '|---:|---:|---:|---:|---:|',
    ...samples.map((s) => `| ${s.atSecs} | ${s.throughputRps.toFixed(0)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${s.rssMb?.toFixed(0) ?? 'n/a'} |`),
    '',
    `Sends: ${sends}; audit chain verify: ${verified.valid === true ? 'valid' : 'NOT valid'}, ${entries ?? '?'} entries` +
      (entries === null ? '' : ` (${(entries / Math.max(1, sends)).toFixed(2)} per send, bootstrap and setup included)`),
    `RSS: ${verdict.rss}`,
    `p99: ${verdict.p99}`,
    `Verdict: ${verdict.flat ? 'flat' : 'NOT flat'}`,
  ];
  console.log(`\n${lines.join('\n')}`);
  const stamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z').replaceAll(':', '-');
  const dir = join(ROOT, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${stamp}-soak.json`), `${JSON.stringify({ connections, minutes, intervalSecs, sends, audit: verified, samples, verdict }, null, 1)}\n`);
  await writeFile(join(dir, `${stamp}-soak.md`), `${lines.join('\n')}\n`);
  process.exitCode = verdict.flat ? 0 : 1;
} finally {
  await platform.stop();
}
