import { WorkflowStep } from '@agent-platform/contracts';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { createProblemList } from '../problems.ts';
import { normalizeStep } from './normalize-step.ts';

function normalize(input: unknown) {
  const list = createProblemList();
  const step = normalizeStep(list.in('payload/workflow.json'), input, 'steps[0]');
  return { step, problems: list.problems, warnings: list.warnings };
}

const base = { name: 'triage', agent: { ByName: 'claims-intake' } };

describe('normalizeStep', () => {
  it('fills the defaults: Sequential, 30 s, Fail, {{input}}', () => {
    const { step, problems } = normalize(base);
    expect(problems).toEqual([]);
    expect(step).toEqual({
      ...base,
      prompt_template: '{{input}}',
      mode: 'Sequential',
      timeout_secs: 30,
      error_mode: 'Fail',
    });
    expect(Value.Check(WorkflowStep, step)).toBe(true);
  });

  it('accepts prompt and timeout_seconds as aliases', () => {
    const { step, warnings } = normalize({ ...base, prompt: 'Triage {{input}}', timeout_seconds: 90 });
    expect(step).toMatchObject({ prompt_template: 'Triage {{input}}', timeout_secs: 90 });
    expect(step).not.toHaveProperty('prompt');
    expect(step).not.toHaveProperty('timeout_seconds');
    expect(warnings).toEqual([]);
  });

  it('lets the canonical spelling win over the alias, with a warning naming the ignored alias', () => {
    const { step, problems, warnings } = normalize({
      ...base,
      prompt_template: 'canonical',
      prompt: 'alias',
      timeout_secs: 10,
      timeout_seconds: 99,
    });
    expect(problems).toEqual([]);
    expect(step).toMatchObject({ prompt_template: 'canonical', timeout_secs: 10 });
    expect(warnings.map((w) => [w.field, w.rule])).toEqual([
      ['steps[0].prompt', 'alias-ignored'],
      ['steps[0].timeout_seconds', 'alias-ignored'],
    ]);
  });

  it('does not judge an ignored alias: a bad prompt beside a good prompt_template is fine', () => {
    expect(normalize({ ...base, prompt_template: 'x', prompt: 5 }).problems).toEqual([]);
  });

  it.each([
    ['Sequential', 'Sequential'],
    ['sequential', 'Sequential'],
    ['SEQUENTIAL', 'Sequential'],
    ['FanOut', 'FanOut'],
    ['fanout', 'FanOut'],
    ['fan_out', 'FanOut'],
    ['FAN_OUT', 'FanOut'],
    ['Fan_Out', 'FanOut'],
    ['collect', 'Collect'],
    ['Collect', 'Collect'],
  ])('matches mode %s case-insensitively as %s', (input, mode) => {
    expect(normalize({ ...base, mode: input }).step?.mode).toBe(mode);
  });

  it.each(['fan-out', 'fan out', 'parallel', ''])('refuses mode %j', (mode) => {
    expect(normalize({ ...base, mode }).problems.map((p) => p.rule)).toEqual(['step-mode']);
  });

  it('takes Conditional and Loop as objects, their keys matched case-insensitively (D8)', () => {
    expect(normalize({ ...base, mode: { conditional: { condition: 'APPROVED' } } }).step?.mode).toEqual({
      Conditional: { condition: 'APPROVED' },
    });
    expect(normalize({ ...base, mode: { LOOP: { until: 'DONE', max_iterations: 3 } } }).step?.mode).toEqual({
      Loop: { until: 'DONE', max_iterations: 3 },
    });
  });

  it.each(['Conditional', 'conditional', 'Loop', 'LOOP'])('refuses a bare %s string (D8)', (mode) => {
    const { step, problems } = normalize({ ...base, mode });
    expect(step).toBeUndefined();
    expect(problems).toEqual([
      expect.objectContaining({ field: 'steps[0].mode', rule: 'mode-needs-parameters' }),
    ]);
    expect(problems[0]?.message).toMatch(/\{"(Conditional|Loop)": \{/);
  });

  it.each([
    ['Fail', 'Fail'],
    ['fail', 'Fail'],
    ['SKIP', 'Skip'],
  ])('matches error_mode %s case-insensitively', (input, mode) => {
    expect(normalize({ ...base, error_mode: input }).step?.error_mode).toBe(mode);
  });

  it('takes Retry as an object with its key matched case-insensitively', () => {
    expect(normalize({ ...base, error_mode: { retry: { max_retries: 2 } } }).step?.error_mode).toEqual({
      Retry: { max_retries: 2 },
    });
  });

  it('reads a plain-string agent as ByName and keeps ById as a lower-case UUID', () => {
    expect(normalize({ ...base, agent: 'claims-intake' }).step?.agent).toEqual({ ByName: 'claims-intake' });
    expect(
      normalize({ ...base, agent: { ById: '7D9F1C1E-3B1A-4C55-9A55-0B8F0B1C2D3E' } }).step?.agent,
    ).toEqual({
      ById: '7d9f1c1e-3b1a-4c55-9a55-0b8f0b1c2d3e',
    });
  });

  it('returns no step when only output_var is wrong', () => {
    const { step, problems } = normalize({ ...base, output_var: 'input' });
    expect(step).toBeUndefined();
    expect(problems.map((p) => p.rule)).toEqual(['reserved-variable']);
  });

  it('reports every fault of a step, not only the first', () => {
    const { step, problems } = normalize({
      agent: { ById: 'x' },
      mode: 'Loop',
      timeout_secs: -1,
      error_mode: 'Ignore',
      output_var: '9',
    });
    expect(step).toBeUndefined();
    expect(problems.map((p) => p.rule).sort()).toEqual([
      'identifier',
      'mode-needs-parameters',
      'positive-integer',
      'required',
      'step-agent',
      'step-error-mode',
    ]);
  });

  it('produces steps that match the WorkflowStep contract', () => {
    const { step } = normalize({
      ...base,
      prompt: 'x',
      mode: { loop: { until: 'OK', max_iterations: 2 } },
      error_mode: { RETRY: { max_retries: 1 } },
      output_var: 'out',
    });
    expect(Value.Check(WorkflowStep, step)).toBe(true);
  });
});
