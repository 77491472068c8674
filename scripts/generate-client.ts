// Regenerates the typed client in libs/client from the api's own OpenAPI document: the document
// snapshot (libs/client/openapi.json) and its TypeScript types (libs/client/src/generated/api.ts).
// Run with `npm run client:generate` after any change to a route's schemas; `npm run client:check`
// (and a test in `npm test`) fails while the committed files and the server disagree.
import { writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildApiDocument } from './client/api-document.ts';
import { clientDrift } from './client/drift.ts';
import { ROOT } from './client/paths.ts';
import { renderClientFiles } from './client/render-client.ts';

const check = process.argv.includes('--check');
const document = await buildApiDocument();
const files = await renderClientFiles(document);
const drift = await clientDrift(document, files);

if (check) {
  console.log(drift ?? 'libs/client is up to date with the api');
  process.exitCode = drift === null ? 0 : 1;
} else if (drift === null) {
  console.log('libs/client is up to date with the api');
} else {
  // The report without its first two lines (which say to run this very command).
  console.log(drift.split('\n').slice(2).join('\n'));
  for (const file of files) {
    await mkdir(dirname(join(ROOT, file.path)), { recursive: true });
    await writeFile(join(ROOT, file.path), file.text);
    console.log(`wrote ${file.path}`);
  }
}
