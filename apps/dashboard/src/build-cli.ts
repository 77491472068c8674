import { mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildDashboard } from './build-dashboard.ts';

// `npm run build -w apps/dashboard`: writes the bundle the api serves to dist/ for a look at what
// ships (the api itself builds it in memory at start, docs/dashboard.md "How it is built").
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const bundle = await buildDashboard();
await rm(dist, { recursive: true, force: true });
await mkdir(`${dist}assets`, { recursive: true });
await writeFile(`${dist}index.html`, bundle.html);
for (const [name, asset] of bundle.assets) await writeFile(`${dist}assets/${name}`, asset.body);
console.log(`dashboard written to ${dist} (${bundle.assets.size} assets)`);
