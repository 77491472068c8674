import { readFileSync } from 'node:fs';

/**
 * The platform's version: the repository root's package.json (DECISIONS D4: /health reports it
 * and packages compare `min_platform_version` against it). Read once, lazily, at composition.
 */
export function platformVersion(): string {
  const text = readFileSync(new URL('../../../package.json', import.meta.url), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}
