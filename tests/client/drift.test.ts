import { describe, expect, it } from 'vitest';
import { buildApiDocument, type OpenApiDocument } from '../../scripts/client/api-document.ts';
import { clientDrift, describeDrift } from '../../scripts/client/drift.ts';
import { CLIENT_FILES } from '../../scripts/client/paths.ts';
import { renderClientFiles, renderDocument } from '../../scripts/client/render-client.ts';

// The typed client in libs/client is generated from the api's OpenAPI document and committed.
// These tests keep the two from drifting: the api's document today, made in this process, must
// give exactly the committed files; and when it does not, the failure says what to run and what
// changed.

const ok = (schema: unknown) => ({
  description: 'Default Response',
  content: { 'application/json': { schema } },
});
function doc(paths: OpenApiDocument['paths'], version = '0.1.0'): OpenApiDocument {
  return { openapi: '3.1.0', info: { title: 'Agent Platform API', version }, paths };
}
const base = doc({
  '/agents': { get: { summary: 'List agents', responses: { 200: ok({ type: 'object' }) } } },
  '/agents/{id}': {
    get: { responses: { 200: ok({ type: 'object' }) } },
    delete: { responses: { 204: { description: 'Gone' } } },
  },
});

describe('describeDrift: what changed between the committed document and the server', () => {
  it('is empty for the same document', () => {
    expect(describeDrift(base, structuredClone(base))).toEqual([]);
  });

  it('names added, removed and changed operations, and which part of them changed', () => {
    const next = structuredClone(base);
    next.paths['/backups'] = { post: { responses: { 202: ok({ type: 'object' }) } } };
    delete next.paths['/agents/{id}']!.delete;
    (
      next.paths['/agents'] as { get: { responses: Record<string, unknown>; parameters?: unknown } }
    ).get.responses[200] = ok({ type: 'array' });
    (next.paths['/agents'] as { get: { parameters?: unknown } }).get.parameters = [
      { in: 'query', name: 'state' },
    ];
    (next.paths['/agents/{id}'] as { get: { responses: Record<string, unknown> } }).get.responses[404] = ok({
      type: 'object',
    });
    expect(describeDrift(base, next)).toEqual([
      '~ GET /agents: parameters, response 200',
      '~ GET /agents/{id}: response 404 added',
      '+ POST /backups',
      '- DELETE /agents/{id}',
    ]);
  });

  it('names a new platform version and a missing snapshot', () => {
    expect(describeDrift(base, { ...base, info: { ...base.info, version: '0.2.0' } })).toEqual([
      '~ info (version 0.1.0 -> 0.2.0)',
    ]);
    expect(describeDrift(null, base)).toEqual([
      `+ ${CLIENT_FILES.document} (missing: no snapshot committed yet)`,
    ]);
  });
});

describe('clientDrift: the message of a stale client', () => {
  it('says which files are stale, the command that fixes them, and what changed', async () => {
    const current = doc({
      ...base.paths,
      '/backups': { post: { responses: { 202: ok({ type: 'object' }) } } },
    });
    const files = [
      { path: CLIENT_FILES.document, text: renderDocument(current) },
      { path: CLIENT_FILES.types, text: 'new types' },
    ];
    const committed: Record<string, string> = {
      [CLIENT_FILES.document]: renderDocument(base),
      [CLIENT_FILES.types]: 'old types',
    };
    const message = await clientDrift(current, files, async (path) => committed[path] ?? null);
    expect(message).toBe(
      [
        `The typed client (libs/client) is out of date with the api: ${CLIENT_FILES.document} and ${CLIENT_FILES.types} differ from what the server generates.`,
        'Fix: run `npm run client:generate` and commit the result.',
        'What changed in the OpenAPI document (committed -> server):',
        '  + POST /backups',
      ].join('\n'),
    );
  });

  it('catches a hand edit of the generated types when the document is unchanged', async () => {
    const files = [
      { path: CLIENT_FILES.document, text: renderDocument(base) },
      { path: CLIENT_FILES.types, text: 'generated' },
    ];
    const committed: Record<string, string> = {
      [CLIENT_FILES.document]: renderDocument(base),
      [CLIENT_FILES.types]: 'generated, then edited',
    };
    const message = await clientDrift(base, files, async (path) => committed[path] ?? null);
    expect(message).toContain(`${CLIENT_FILES.types} differs from what the server generates`);
    expect(message).toContain('run `npm run client:generate`');
    expect(message).toContain(
      `The OpenAPI document is unchanged: ${CLIENT_FILES.types} was edited by hand, or another openapi-typescript version generates it differently.`,
    );
  });

  it('is null when every file is as generated', async () => {
    const files = [{ path: CLIENT_FILES.document, text: renderDocument(base) }];
    expect(await clientDrift(base, files, async () => renderDocument(base))).toBeNull();
  });
});

describe('the committed client and the api today', () => {
  it('libs/client/openapi.json and src/generated/api.ts are exactly what the api generates now', async () => {
    const document = await buildApiDocument();
    const drift = await clientDrift(document, await renderClientFiles(document));
    // On failure the message is the whole report: the stale files, `npm run client:generate`, the changed operations.
    if (drift !== null) expect.fail(drift);
    expect(Object.keys(document.paths)).toContain('/agents/{id}/send');
    // Every optional surface is on when the document is made: the MCP route is in it.
    expect(Object.keys(document.paths)).toContain('/mcp');
  });
});
