import { readFileSync } from 'node:fs';

/**
 * The platform's version: the repository root's package.json (DECISIONS D4: /health reports it,
 * packages compare `min_platform_version` against it, every process prints it at boot).
 */
export function platformVersion(): string {
  const text = readFileSync(new URL('../../../package.json', import.meta.url), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}
