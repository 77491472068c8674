import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The command that regenerates the client: every message about a stale client names it. */
export const GENERATE_COMMAND = 'npm run client:generate';

/** The committed outputs, relative to the root: the document snapshot, the types and the API reference made from it. */
export const CLIENT_FILES = {
  document: 'libs/client/openapi.json',
  types: 'libs/client/src/generated/api.ts',
  reference: 'docs/api-reference.md',
} as const;
