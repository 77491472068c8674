import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderConfigReference } from './config-reference.ts';

const DOC = fileURLToPath(new URL('../../../docs/config.md', import.meta.url));
const START = '<!-- config-reference:start -->\n';
const END = '<!-- config-reference:end -->';

describe('docs/config.md', () => {
  it('holds exactly the reference rendered from the schema (regenerate with renderConfigReference())', async () => {
    const doc = await readFile(DOC, 'utf8');
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    expect(doc.slice(start + START.length, end)).toBe(renderConfigReference());
  });

  it('documents every key with its default', () => {
    const reference = renderConfigReference();
    for (const row of [
      '| `server.listen` | string | `"127.0.0.1:4200"` |',
      '| `server.body_limit_bytes` | integer >= 1 | `10485760` |',
      '| `auth.mode` | one of "disabled", "local", "oidc" | `"disabled"` |',
      '| `auth.rate_limit.max_backoff_secs` | integer >= 1 | `300` |',
      '| `server.tls.cert_file` | string | required |',
      '| `providers[].api_key_env` | string | unset |',
      '| `network.allow_private_targets` | boolean | `false` |',
      '| `agents.rate_limit_per_minute` | integer >= 1 | `120` |',
      '| `agents.idempotency_ttl_hours` | integer >= 24 | `24` |',
    ]) {
      expect(reference).toContain(row);
    }
  });
});
