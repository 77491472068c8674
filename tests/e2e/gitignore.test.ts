import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/platform-process.ts';

// What the README's walkthroughs leave in the checkout (run from the repository root) must not
// show up in `git status`: config files, data dirs, the claims system's ledger, the mail sent to
// the channel, reports. A newcomer following them should not be asked to commit any of it.
const WALKTHROUGH_OUTPUTS = [
  'agent-platform.toml',
  '.agent-platform/platform.db',
  'registry.toml',
  '.agent-platform-registry/store.db',
  'governance.toml',
  'restored.toml',
  'restored-data/platform.db',
  'audit-sink/audit-1.jsonl',
  'compliance-report-2026-11.pdf',
  'claims-ledger.jsonl',
  'mail.txt',
  'platform.log',
];

describe('.gitignore', () => {
  it('ignores every file the README walkthroughs write into the checkout', () => {
    const ignored = execFileSync('git', ['check-ignore', '--no-index', ...WALKTHROUGH_OUTPUTS], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((line) => line !== '');
    expect(ignored.sort()).toEqual([...WALKTHROUGH_OUTPUTS].sort());
  });
});
