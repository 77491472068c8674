import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePackage, type PackageSpec } from '@agent-platform/domain/testing';
import {
  startPlatformTestApi,
  type PlatformTestApi,
  type StartPlatformTestApiOptions,
} from '../testing/platform-test-api.ts';

/** The all-in-one platform plus a directory to write packages into; `close` removes both. */
export interface CompetencyHarness {
  api: PlatformTestApi;
  /** Writes the package (replacing an earlier version of it) and returns its directory. */
  write(spec: PackageSpec): Promise<string>;
  /** Writes and installs through POST /catalog/install, expecting 201; the agent id for an agent template. */
  install(spec: PackageSpec, options?: { activate?: boolean }): Promise<string>;
  close(): Promise<void>;
}

export async function startCompetencyHarness(
  options: StartPlatformTestApiOptions = {},
): Promise<CompetencyHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-competencies-'));
  const api = await startPlatformTestApi(options);
  const write = (spec: PackageSpec) => writePackage(dir, spec);
  return {
    api,
    write,
    async install(spec, installOptions = {}) {
      const res = await api.request('POST', '/catalog/install', {
        body: { path: await write(spec), ...(installOptions.activate ? { activate: true } : {}) },
      });
      if (res.status !== 201)
        throw new Error(`install of ${spec.name} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return (res.body.installed as Array<{ name: string; id: string }>).find((p) => p.name === spec.name)!
        .id;
    },
    async close() {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A competency with one setting of each type (docs/competencies.md "Settings"). */
export const SETTINGS_FRONTMATTER = `settings:
  - key: tone
    label: Tone
    type: Select
    default: formal
    values: [formal, friendly]
  - key: escalate
    label: Escalate to a human
    type: Toggle
    default: true
  - key: max_amount
    label: Maximum amount
    type: Number
    default: 5000
  - key: signature
    label: Signature
    type: Text`;
