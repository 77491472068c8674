import {
  bundledSkills,
  checkSkillRuntime,
  DEFAULT_STARLARK_LIMITS,
  runToolLoop,
  starlarkToolBindings,
  type SkillRecord,
  type ToolBinding,
} from '@agent-platform/domain';
import { createOpenAiProvider } from '@agent-platform/providers';
import { requireStarlarkRunner } from '@agent-platform/starlark/testing';
import { startFakeOpenAiServer } from '@agent-platform/testkit';
import { afterAll, describe, expect, it } from 'vitest';

// Starlark skill tools as the model tool loop runs them (docs/skills.md "Tools"), on the
// interpreter npm install built: the bundled skills' tools, the limits, and a whole tool loop
// over the OpenAI protocol.
const runner = requireStarlarkRunner('the bundled starlark skill tests');
afterAll(async () => runner?.close());

async function bundled(id: string): Promise<SkillRecord> {
  const skill = (await bundledSkills()).get(id);
  if (skill === undefined) throw new Error(`no bundled skill ${id}`);
  return skill;
}

function tool(bindings: ToolBinding[], name: string): ToolBinding {
  const found = bindings.find((b) => b.spec.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

const run = async (skill: string, name: string, args: Record<string, unknown>): Promise<unknown> =>
  JSON.parse(await tool(starlarkToolBindings(await bundled(skill), runner), name).execute(args, {}));

describe.skipIf(runner === null)('starlark skill tools', () => {
  it('every bundled skill passes the install checks', async () => {
    for (const [id, skill] of await bundledSkills())
      await expect(checkSkillRuntime(id, skill, { starlark: runner, limits: () => DEFAULT_STARLARK_LIMITS })).resolves.toBeUndefined();
  });

  it('premium-calc computes refunds and payouts from the arguments', async () => {
    expect(await run('premium-calc', 'prorate_premium', { annual_premium: 1200, days_in_force: 73 })).toEqual({
      earned_premium: 240,
      refund: 960,
      method: 'pro_rata',
    });
    expect(await run('premium-calc', 'prorate_premium', { annual_premium: 1200, days_in_force: 73, short_rate_penalty_pct: 10 })).toEqual({
      earned_premium: 336,
      refund: 864,
      method: 'short_rate',
    });
    expect(await run('premium-calc', 'claim_payout', { loss: 12000, deductible: 1000, limit: 10000, coinsurance_pct: 80 })).toEqual({
      payable: 8800,
      retained_by_insured: 3200,
      capped_at_limit: false,
    });
    expect(await run('premium-calc', 'claim_payout', { loss: 50000, deductible: 500, limit: 25000 })).toEqual({
      payable: 25000,
      retained_by_insured: 25000,
      capped_at_limit: true,
    });
  });

  it('date-math does calendar arithmetic, leap years included', async () => {
    expect(await run('date-math', 'days_between', { from: '2026-01-01', to: '2026-03-01' })).toEqual({ days: 59 });
    expect(await run('date-math', 'days_between', { from: '2024-03-01', to: '2024-02-01' })).toEqual({ days: -29 });
    expect(await run('date-math', 'add_days', { date: '2024-02-28', days: 1 })).toEqual({ date: '2024-02-29', weekday: 'Thursday' });
    expect(await run('date-math', 'add_days', { date: '1999-12-31', days: 30 })).toEqual({ date: '2000-01-30', weekday: 'Sunday' });
    expect(await run('date-math', 'day_of_week', { date: '1970-01-01' })).toEqual({ weekday: 'Thursday' });
  });

  it('a tool refusing its arguments fails with the file and line of the refusal', async () => {
    const dates = tool(starlarkToolBindings(await bundled('date-math'), runner), 'add_days');
    await expect(dates.execute({ date: '2023-02-29', days: 1 }, {})).rejects.toThrow(/^dates\.star:\d+: fail: date: 2023-02 has no day 29$/);
    const payout = tool(starlarkToolBindings(await bundled('premium-calc'), runner), 'claim_payout');
    await expect(payout.execute({ loss: -5, limit: 10 }, {})).rejects.toThrow(/^premium\.star:\d+: fail: loss must not be negative \(got -5\)$/);
  });

  const runaway: SkillRecord = {
    ...({} as SkillRecord),
    id: 'spinner',
    name: 'spinner',
    version: '1.0.0',
    description: 'Never ends.',
    runtime: 'starlark',
    entry: 'spin.star',
    tools: [{ name: 'spin' }],
    config: {},
    body: '```starlark\ndef spin(args):\n    n = 0\n    for i in range(1000000000):\n        for j in range(1000000000):\n            n += 1\n    return n\n```\n',
  };

  it('a runaway loop is stopped at the step limit, or at the time limit, with a clear error', async () => {
    const [bySteps] = starlarkToolBindings(runaway, runner, { maxSteps: 50_000, timeoutMs: 10_000 });
    await expect(bySteps!.execute({}, {})).rejects.toThrow(/^spin\.star:[3-5]: stopped after 50000 steps, the step limit$/);
    const started = Date.now();
    const [byTime] = starlarkToolBindings(runaway, runner, { maxSteps: 1e15, timeoutMs: 200 });
    await expect(byTime!.execute({}, {})).rejects.toThrow('spin.star: stopped after 200 ms, the time limit');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('run in the model tool loop: the result goes back to the model, a failure is a failed call', async () => {
    const fake = await startFakeOpenAiServer();
    try {
      fake.script(
        { tool_calls: [{ id: 'c1', name: 'claim_payout', arguments: { loss: 8000, deductible: 500, limit: 5000 } }] },
        { tool_calls: [{ id: 'c2', name: 'claim_payout', arguments: { loss: 'a lot', limit: 5000 } }] },
        { text: 'We will pay 5000.' },
      );
      const result = await runToolLoop({
        provider: createOpenAiProvider({ id: 'oa', base_url: fake.url }),
        request: { model: 'gpt-test', messages: [{ role: 'user', content: 'What do we pay?' }] },
        tools: starlarkToolBindings(await bundled('premium-calc'), runner),
      });
      expect(result.content).toBe('We will pay 5000.');
      expect(result.tool_calls.map(({ tool_name, skill_id, success }) => ({ tool_name, skill_id, success }))).toEqual([
        { tool_name: 'claim_payout', skill_id: 'premium-calc', success: true },
        { tool_name: 'claim_payout', skill_id: 'premium-calc', success: false },
      ]);
      expect(fake.requests[0]?.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['prorate_premium', 'claim_payout']);
      const toolMessages = fake.requests[2]?.body.messages.filter((m: { role: string }) => m.role === 'tool');
      expect(JSON.parse(toolMessages[0].content)).toEqual({ payable: 5000, retained_by_insured: 3000, capped_at_limit: true });
      expect(toolMessages[1].content).toMatch(/^error: tool 'claim_payout' failed: premium\.star:\d+: fail: loss must be a number \(got string\)$/);
    } finally {
      await fake.close();
    }
  });
});
