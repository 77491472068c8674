import { DEFAULT_PII_CATEGORIES } from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { parseConfigText } from './load-config.ts';
import { defaultConfig } from './validate-config.ts';

const PATH = '/etc/agent-platform/agent-platform.toml';

function problemsOf(text: string): string[] {
  try {
    parseConfigText(text, PATH);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('config was accepted');
}

const VLLM =
  '[[providers]]\nid = "vllm"\nkind = "openai"\nbase_url = "http://127.0.0.1:8000/v1"\nmodels = ["llama3"]\n';

describe('[gateway] (docs/privacy-gateway.md)', () => {
  it('defaults to tokenising every category but names, forced-local routing off, refusing when it cannot route', () => {
    const { gateway } = defaultConfig();
    expect(gateway).toMatchObject({
      enabled: true,
      forced_local: false,
      local_model: '',
      when_no_local: 'refuse',
      traffic_retention_hours: 24,
    });
    expect(gateway.categories).toEqual([...DEFAULT_PII_CATEGORIES]);
    expect(gateway.categories).not.toContain('person_name');
    expect(gateway.policy_number_patterns.length).toBeGreaterThan(0);
  });

  it('accepts a carrier’s patterns, a local-eligible provider and a local model on it', () => {
    const config = parseConfigText(
      `${VLLM}local_eligible = true\n[gateway]\nforced_local = true\nlocal_model = "vllm/llama3"\ncategories = ["email", "person_name"]\npolicy_number_patterns = ['\\bACM\\d{8}\\b']\n`,
      PATH,
    );
    expect(config.gateway).toMatchObject({
      forced_local: true,
      local_model: 'vllm/llama3',
      categories: ['email', 'person_name'],
      policy_number_patterns: ['\\bACM\\d{8}\\b'],
    });
    expect(config.providers[0]?.local_eligible).toBe(true);
  });

  it.each([
    [
      'a pattern that does not compile',
      "[gateway]\nclaim_number_patterns = ['(CLM']",
      'gateway.claim_number_patterns[0]: not a usable regular expression',
    ],
    [
      'a pattern matching the empty string',
      "[gateway]\npolicy_number_patterns = ['\\d*']",
      'gateway.policy_number_patterns[0]: not a usable regular expression: the pattern matches an empty string',
    ],
    ['an unknown category', '[gateway]\ncategories = ["iban"]', 'gateway.categories[0]: must be one of'],
    [
      'a local model on a cloud provider',
      `${VLLM}[gateway]\nlocal_model = "vllm/llama3"`,
      'gateway.local_model: provider "vllm" is not local-eligible',
    ],
    [
      'a local model not offered',
      `${VLLM}local_eligible = true\n[gateway]\nlocal_model = "vllm/mistral"`,
      'gateway.local_model: provider "vllm" offers no model "mistral"',
    ],
    [
      'a local model of an unknown provider',
      '[gateway]\nlocal_model = "ollama/llama3"',
      'gateway.local_model: provider "ollama" is not configured',
    ],
    [
      'a local model without a provider',
      '[gateway]\nlocal_model = "llama3"',
      'gateway.local_model: must be "provider/model"',
    ],
    ['an unknown policy', '[gateway]\nwhen_no_local = "cloud"', 'gateway.when_no_local: must be one of'],
    [
      'retention of zero hours',
      '[gateway]\ntraffic_retention_hours = 0',
      'gateway.traffic_retention_hours: must be >= 1',
    ],
  ])('refuses %s, naming the key', (_name, text, expected) => {
    const problems = problemsOf(text);
    expect(
      problems.some((p) => p.startsWith(expected)),
      problems.join('\n'),
    ).toBe(true);
  });
});
