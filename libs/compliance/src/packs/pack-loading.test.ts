import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PackLoadError } from './pack-model.ts';
import { createPackRegistry, loadBuiltinPacks, loadCarrierPacks } from './pack-registry.ts';
import { parsePack } from './parse-pack.ts';

const PLATFORM = new Set(['PC-AUDIT-01', 'PC-AUDIT-02', 'PC-AUTH-02']);

const GOOD = `
format: agent-platform/compliance-pack/1
id: acme-internal
name: Acme internal AI policy
version: "2026.1"
jurisdiction: Acme Mutual, all lines
controls:
  - id: ACME-1
    requirement: The audit trail is on and intact.
    platform_controls: [PC-AUDIT-01, PC-AUDIT-02]
  - id: ACME-2
    requirement: Keep audit entries for seven years.
    evidence:
      - kind: audit_retention
        min_days: 2557
  - id: ACME-3
    requirement: The model risk committee approved every agent.
    attestation: required
    attestation_guidance: Committee minutes.
`;

function problemsOf(text: string, file = 'acme.yaml'): string[] {
  try {
    parsePack(text, { file, origin: 'carrier', platformControls: PLATFORM });
  } catch (error) {
    expect(error).toBeInstanceOf(PackLoadError);
    return (error as PackLoadError).problems;
  }
  throw new Error('the pack was accepted');
}

describe('parsePack', () => {
  it('reads a valid pack, filling defaults and splitting each check into kind and parameters', () => {
    const pack = parsePack(GOOD, { file: 'acme.yaml', origin: 'carrier', platformControls: PLATFORM });
    expect(pack.meta).toMatchObject({
      id: 'acme-internal',
      name: 'Acme internal AI policy',
      version: '2026.1',
    });
    expect(pack.controls.map((c) => [c.id, c.attestation, c.platform_controls, c.evidence])).toEqual([
      ['ACME-1', 'none', ['PC-AUDIT-01', 'PC-AUDIT-02'], []],
      ['ACME-2', 'none', [], [{ kind: 'audit_retention', params: { min_days: 2557 } }]],
      ['ACME-3', 'required', [], []],
    ]);
  });

  it('reads the same pack written as JSON', () => {
    const json = JSON.stringify({
      format: 'agent-platform/compliance-pack/1',
      id: 'acme-json',
      name: 'Acme',
      version: '1',
      jurisdiction: 'US',
      controls: [{ id: 'A-1', requirement: 'Audit on.', platform_controls: ['PC-AUDIT-01'] }],
    });
    expect(
      parsePack(json, { file: 'acme.json', origin: 'carrier', platformControls: PLATFORM }).controls,
    ).toHaveLength(1);
  });

  it('refuses text that is not YAML, saying so', () => {
    expect(problemsOf('id: [unclosed\n')[0]).toMatch(/^not valid YAML or JSON: /);
  });

  it('refuses a YAML alias bomb as a fault of the pack, not an unhandled error', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => {
      const prev = i === 0 ? 'a' : `l${i - 1}`;
      return `l${i}: &l${i} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`;
    })].join('\n');
    expect(problemsOf(bomb)).toEqual([expect.stringMatching(/alias bomb/)]);
  });

  it('names the control (by id) and the field of every schema fault, all at once', () => {
    const text = GOOD.replace('attestation: required', 'attestation: maybe')
      .replace('  - id: ACME-2\n    requirement: Keep audit entries for seven years.\n', '  - id: ACME-2\n')
      .replace('version: "2026.1"\n', '');
    expect(problemsOf(text)).toEqual(
      expect.arrayContaining([
        "field 'version': required field is missing",
        "control ACME-2: field 'requirement': required field is missing",
        expect.stringMatching(/^control ACME-3: field 'attestation': /),
      ]),
    );
  });

  it('refuses an unknown field, naming it, so that a typo is not silently ignored', () => {
    expect(problemsOf(GOOD.replace('  - id: ACME-1\n', '  - id: ACME-1\n    evidense: []\n'))).toEqual([
      "control ACME-1: field 'evidense': unknown field",
    ]);
  });

  it('refuses an unknown evidence kind with the closest known one and the whole list', () => {
    const [problem] = problemsOf(GOOD.replace('kind: audit_retention', 'kind: audit_retension'));
    expect(problem).toMatch(
      /^control ACME-2: field 'evidence\[0\]\.kind': unknown evidence kind 'audit_retension' \(did you mean "audit_retention"\?\); known kinds: audit_enabled, /,
    );
  });

  it("checks each kind's parameters: a missing, a wrong and an unknown one", () => {
    expect(problemsOf(GOOD.replace('min_days: 2557', 'min_dayz: 2557'))).toEqual([
      "control ACME-2: field 'evidence[0].min_days': required field is missing (evidence kind audit_retention)",
      "control ACME-2: field 'evidence[0].min_dayz': unknown field (evidence kind audit_retention)",
    ]);
    expect(problemsOf(GOOD.replace('min_days: 2557', 'min_days: 0'))[0]).toMatch(
      /^control ACME-2: field 'evidence\[0\]\.min_days': .*1.* \(evidence kind audit_retention\)$/,
    );
  });

  it('refuses a reference to a platform control that does not exist', () => {
    expect(problemsOf(GOOD.replace('PC-AUDIT-02]', 'PC-AUDT-02]'))).toEqual([
      "control ACME-1: field 'platform_controls[1]': no platform control 'PC-AUDT-02' in the built-in platform-controls pack (did you mean \"PC-AUDIT-02\"?)",
    ]);
  });

  it('refuses duplicate control ids, a control with no evidence, and guidance on an automatic control', () => {
    const text = GOOD.replace('id: ACME-2', 'id: ACME-1').replace('    attestation: required\n', '');
    expect(problemsOf(text)).toEqual([
      "control ACME-1: field 'id': duplicate control id (ids must be unique within a pack)",
      'control ACME-3: no evidence: give platform_controls, evidence, or attestation: required',
      "control ACME-3: field 'attestation_guidance': only for a control with attestation: required",
    ]);
  });

  it('refuses a file of another format', () => {
    expect(problemsOf(GOOD.replace('compliance-pack/1', 'compliance-pack/2'))).toEqual([
      'field \'format\': must be "agent-platform/compliance-pack/1"',
    ]);
  });
});

describe('built-in packs', () => {
  it('load: the platform controls and the six framework packs of the reference', async () => {
    const { packs, platformControls } = await loadBuiltinPacks();
    expect(packs.map((p) => p.meta.id).sort()).toEqual([
      'co-reg-10-1-1',
      'eu-ai-act',
      'eu-dora',
      'iso-iec-42001',
      'naic-ais-bulletin',
      'nydfs-cl-2024-07',
      'platform-controls',
    ]);
    expect(platformControls.size).toBe(20);
    for (const pack of packs) {
      // A paraphrase must never pass for the regulation's text: every framework pack says so.
      if (pack.meta.id !== 'platform-controls')
        expect(pack.meta.disclaimer, pack.meta.id).toMatch(/paraphrased/i);
    }
  });

  it("carry the reference's UNCONFIRMED marks into the controls", async () => {
    const { packs } = await loadBuiltinPacks();
    const unconfirmed = (id: string) =>
      packs
        .find((p) => p.meta.id === id)!
        .controls.filter((c) => c.unconfirmed !== undefined)
        .map((c) => c.id);
    expect(unconfirmed('naic-ais-bulletin')).toEqual([
      'NAIC-02',
      'NAIC-05',
      'NAIC-06',
      'NAIC-07',
      'NAIC-08',
      'NAIC-09',
      'NAIC-10',
    ]);
    expect(unconfirmed('iso-iec-42001')).toHaveLength(10);
    expect(packs.find((p) => p.meta.id === 'eu-ai-act')!.meta.disclaimer).toMatch(
      /Digital\s+Omnibus.*UNCONFIRMED/s,
    );
  });
});

describe('carrier packs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-packs-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('load the good files of the directory and list each bad one with its faults', async () => {
    await writeFile(join(dir, 'acme.yaml'), GOOD);
    await writeFile(
      join(dir, 'broken.yml'),
      GOOD.replace('id: acme-internal', 'id: acme-broken').replace('min_days: 2557', 'min_days: -1'),
    );
    await writeFile(
      join(dir, 'shadow.json'),
      JSON.stringify({
        format: 'agent-platform/compliance-pack/1',
        id: 'naic-ais-bulletin',
        name: 'x',
        version: '1',
        jurisdiction: 'x',
        controls: [{ id: 'X', requirement: 'x', attestation: 'required' }],
      }),
    );
    await writeFile(join(dir, 'notes.txt'), 'not a pack');
    const builtin = await loadBuiltinPacks();
    const { packs, failed } = await loadCarrierPacks(dir, builtin);
    expect(packs.map((p) => [p.meta.id, p.origin])).toEqual([['acme-internal', 'carrier']]);
    expect(failed).toEqual([
      {
        file: 'broken.yml',
        errors: [expect.stringMatching(/^control ACME-2: field 'evidence\[0\]\.min_days': /)],
      },
      {
        file: 'shadow.json',
        errors: [
          "field 'id': pack id 'naic-ais-bulletin' is already taken by the built-in pack naic-ais-bulletin.yaml; a carrier pack may not shadow another pack",
        ],
      },
    ]);
  });

  it('refuses a second carrier pack with an id already taken by an earlier file', async () => {
    await writeFile(join(dir, 'a.yaml'), GOOD);
    await writeFile(join(dir, 'b.yaml'), GOOD);
    const { packs, failed } = await loadCarrierPacks(dir, await loadBuiltinPacks());
    expect(packs.map((p) => p.file)).toEqual(['a.yaml']);
    expect(failed).toEqual([
      {
        file: 'b.yaml',
        errors: [
          "field 'id': pack id 'acme-internal' is already taken by a.yaml; a carrier pack may not shadow another pack",
        ],
      },
    ]);
  });

  it('report a directory that cannot be read as a failure, keeping the built-in packs', async () => {
    const registry = await createPackRegistry({ packsDir: join(dir, 'missing') });
    expect(registry.summaries()).toHaveLength(7);
    expect(registry.current().failed).toEqual([
      {
        file: join(dir, 'missing'),
        errors: [expect.stringMatching(/^\[compliance\] packs_dir cannot be read: ENOENT/)],
      },
    ]);
  });

  it('are read again on reload: a pack added or fixed appears, a removed one goes', async () => {
    const registry = await createPackRegistry({ packsDir: dir });
    expect(registry.get('acme-internal')).toBeUndefined();
    await writeFile(join(dir, 'acme.yaml'), GOOD);
    await registry.reload(dir);
    expect(registry.summaries().at(-1)).toEqual({
      id: 'acme-internal',
      name: 'Acme internal AI policy',
      version: '2026.1',
      jurisdiction: 'Acme Mutual, all lines',
      control_count: 3,
      origin: 'carrier',
    });
    await rm(join(dir, 'acme.yaml'));
    await registry.reload(dir);
    expect(registry.get('acme-internal')).toBeUndefined();
  });
});
