import { startTestApi } from '@agent-platform/api/testing';
import { documentConfig } from './document-config.ts';

/** An OpenAPI document as JSON: what GET /openapi.json answers. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/**
 * Builds the api in this process, as the api tests do (composition root, every route plugin and
 * hook, embedded engines in a temp dir, no listener), and returns its OpenAPI document. The same
 * document a running platform with these surfaces serves at GET /openapi.json (the client's
 * example test checks that against a real process).
 */
export async function buildApiDocument(): Promise<OpenApiDocument> {
  const api = await startTestApi({ listen: false, config: documentConfig() });
  try {
    return JSON.parse(JSON.stringify(api.app.swagger())) as OpenApiDocument;
  } finally {
    await api.close();
  }
}
