import { openExampleArchives, registryCall } from '@agent-platform/registry-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from './testing/cli-runs.ts';
import { startCliRegistry, type CliRegistry } from './testing/cli-registry.ts';

// `agent-platform registry team ...` and `agent-platform package owners ...` (docs/registry.md
// "Teams" and "Ownership") against a real registry: the all-in-one's, in auth mode local, each
// person calling with its own key (AP_REGISTRY_KEY).
let registry: CliRegistry;
let url: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  registry = await startCliRegistry('ap-registry-team-cli-', ['alice', 'bob']);
  url = registry.url;
  [alice, bob] = [registry.keys['alice']!, registry.keys['bob']!];
  const examples = await openExampleArchives();
  expect((await registryCall(url, 'POST', '/packages', { bearer: alice, archive: await examples.build('loss-summary') })).status).toBe(201);
  await examples.close();
}, 60_000);
afterAll(async () => registry?.close());

function cli(args: string[], key: string): Promise<CliResult> {
  return registry.cli(args, key);
}

describe('agent-platform registry team and package owners', () => {
  it('makes a team, invites and accepts, hands it a package two-sidedly, and removing a member refuses it at once', async () => {
    expect(await cli(['registry', 'team', 'create', 'claims-team'], alice)).toMatchObject({ code: 0, stdout: `Made team claims-team on ${url}; you are its owner.\nteam claims-team\n  owner   key:alice\n` });
    const invited = await cli(['registry', 'team', 'invite', 'claims-team', 'key:bob'], alice);
    expect(invited.code, invited.stderr).toBe(0);
    expect(invited.stdout).toContain(`Invited key:bob to team claims-team as member on ${url}; they join when they accept.`);
    expect((await cli(['registry', 'team', 'list'], bob)).stdout).toBe('claims-team  1 member, 1 invited\n');
    expect((await cli(['registry', 'team', 'accept', 'claims-team'], bob)).stdout).toContain(`Joined team claims-team on ${url}.`);
    expect((await cli(['registry', 'team', 'show', 'claims-team'], bob)).stdout).toBe('team claims-team\n  owner   key:alice\n  member  key:bob\n');

    // The package is offered to the team, and its owner (alice) accepts for it.
    const offered = await cli(['package', 'owners', 'loss-summary', '--add', 'team:claims-team'], alice);
    expect(offered.code, offered.stderr).toBe(0);
    expect(offered.stdout).toContain('loss-summary owners: key:alice\n  invited team:claims-team (by key:alice');
    expect((await cli(['package', 'owners', 'loss-summary', '--accept', '--team', 'claims-team'], bob)).code).toBe(1);
    const accepted = await cli(['package', 'owners', 'loss-summary', '--accept', '--team', 'claims-team'], alice);
    expect(accepted.stdout).toBe(`Accepted: team claims-team owns loss-summary on ${url}.\nloss-summary owners: key:alice, team:claims-team\n`);

    // Bob, a member, yanks; removed from the team, his next change is refused.
    expect((await cli(['package', 'yank', 'loss-summary', '1.0.0', '--reason', 'wrong rates'], bob)).code).toBe(0);
    expect((await cli(['registry', 'team', 'remove', 'claims-team', 'key:bob'], alice)).stdout).toContain(`Removed key:bob from team claims-team on ${url}.`);
    const refused = await cli(['package', 'yank', 'loss-summary', '1.0.0', '--reason', 'fixed', '--undo'], bob);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('answered 403: PermissionDenied');

    // A person is invited the same way and accepts alone; then the inviter can leave.
    expect((await cli(['package', 'owners', 'loss-summary', '--add', 'key:bob'], alice)).stdout).toContain('invited key:bob');
    expect((await cli(['package', 'owners', 'loss-summary', '--accept'], bob)).stdout).toBe(`Accepted: you own loss-summary on ${url}.\nloss-summary owners: key:alice, team:claims-team, key:bob\n`);
    expect((await cli(['package', 'owners', 'loss-summary', '--remove', 'key:alice'], bob)).stdout).toContain('loss-summary owners: team:claims-team, key:bob\n');
    expect((await cli(['package', 'owners', 'loss-summary'], bob)).stdout).toBe('loss-summary owners: team:claims-team, key:bob\n');
  });

  it('refuses a bad command line with exit 2 before calling the registry, and a refused call with exit 1', async () => {
    for (const args of [
      ['registry', 'team'],
      ['registry', 'team', 'make', 'x'],
      ['registry', 'team', 'create'],
      ['registry', 'team', 'invite', 'claims-team'],
      ['registry', 'team', 'invite', 'claims-team', 'key:bob', '--role', 'admin'],
      ['registry', 'team', 'remove', 'claims-team'],
      ['registry', 'team', 'delete'],
      ['registry', 'team', 'delete', 'claims-team', 'extra'],
      ['package', 'owners'],
      ['package', 'owners', 'loss-summary', '--accept', '--add', 'key:bob'],
      ['package', 'owners', 'loss-summary', '--team', 'claims-team'],
    ]) {
      const res = await cli(args, alice);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).not.toBe('');
    }
    const taken = await cli(['registry', 'team', 'create', 'claims-team'], bob);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('answered 409: Conflict');
    expect((await cli(['registry', 'team', 'show', 'no-such-team'], bob)).code).toBe(1);
    expect((await cli(['package', 'owners', 'loss-summary', '--accept'], alice)).stderr).toContain('answered 404');
    // A team that still owns a package is not deleted; one that owns nothing is, and is gone.
    const owning = await cli(['registry', 'team', 'delete', 'claims-team'], alice);
    expect(owning.code).toBe(1);
    expect(owning.stderr).toContain('still owns or is invited to own 1 package (loss-summary)');
    expect((await cli(['registry', 'team', 'create', 'spare-team'], bob)).code).toBe(0);
    const deleted = await cli(['registry', 'team', 'delete', 'spare-team'], bob);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/^Deleted team spare-team on \S+ \(\d{4}-\d\d-\d\dT/);
    expect(deleted.stdout).toContain(` on ${url} (`);
    expect((await cli(['registry', 'team', 'show', 'spare-team'], bob)).code).toBe(1);
    expect((await cli(['registry', 'team', 'list'], bob)).stdout).not.toContain('spare-team');
  });
});
