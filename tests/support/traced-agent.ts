import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writePackage } from '@agent-platform/domain/testing';
import type { CollectedSpan, FakeReply, RecordedRequest } from '@agent-platform/testkit';

/**
 * The packages the tracing and metrics tests install: an agent `adjuster` whose competency lists
 * the bundled starlark skill `premium-calc` and who may use its tools, and a one-step workflow
 * `settle` that runs it. Returns the package directories, in install order.
 */
export async function writeTracedPackages(
  root: string,
): Promise<{ competency: string; agent: string; workflow: string }> {
  const competency = await writePackage(root, {
    type: 'competency',
    name: 'payouts',
    skills: ['premium-calc'],
    body: 'Explain payouts.',
  });
  const agent = join(root, 'adjuster');
  await mkdir(join(agent, 'payload'), { recursive: true });
  await writeFile(
    join(agent, 'package.toml'),
    [
      '[package]',
      'type = "agent-template"',
      'name = "adjuster"',
      'title = "Adjuster"',
      'version = "1.0.0"',
      'description = "Computes payouts."',
      'min_platform_version = "0.1.0"',
      '',
      '[dependencies]',
      'payouts = "^1.0.0"',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(agent, 'payload', 'AGENT.md'),
    '---\ndescription: Computes payouts.\ncompetencies: [payouts]\nallow_skill_tools: ["premium-calc/*"]\n---\nYou compute payouts.\n',
  );
  const workflow = await writePackage(root, {
    type: 'workflow-template',
    name: 'settle',
    agents: ['adjuster'],
    dependencies: { adjuster: '^1.0.0' },
  });
  return { competency, agent, workflow };
}

/** A message that makes the model call the `claim_payout` tool once, then answer. */
export const PAYOUT_PROMPT = 'payout: a 8000 loss with a 500 deductible';

/**
 * The model stand-in: to a message starting `payout:` it first asks for `claim_payout`, then
 * (once the tool answered) replies with text; anything else is echoed.
 */
export function payoutModel(request: RecordedRequest): FakeReply {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
  const user = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  if (user.startsWith('payout:') && !messages.some((m) => m.role === 'tool')) {
    return {
      tool_calls: [
        { id: 'c1', name: 'claim_payout', arguments: { loss: 8000, deductible: 500, limit: 5000 } },
      ],
    };
  }
  return { text: user.startsWith('payout:') ? 'We pay 5000.' : user };
}

/** The first span named `name` (or matching) in `spans`, failing with what was there. */
export function spanNamed(spans: readonly CollectedSpan[], name: string | RegExp): CollectedSpan {
  const found = spans.find((s) => (typeof name === 'string' ? s.name === name : name.test(s.name)));
  if (found === undefined)
    throw new Error(
      `no span ${String(name)} among: ${spans.map((s) => `${s.service}:${s.name}`).join(', ')}`,
    );
  return found;
}
