import { CompliancePackFile, type PackControl } from '@agent-platform/contracts';
import { Value } from 'typebox/value';
import { parseDocument } from 'yaml';
import { EVIDENCE_KINDS, evidenceKindOf } from '../evidence/evidence-kinds.ts';
import {
  PLATFORM_CONTROLS_PACK,
  PackLoadError,
  type LoadedControl,
  type LoadedPack,
  type PackCheck,
} from './pack-model.ts';
import { didYouMean } from '@agent-platform/contracts';
import { describeSchemaErrors, fieldPath } from './pack-schema-errors.ts';

export interface ParsePackOptions {
  file: string;
  origin: LoadedPack['origin'];
  /**
   * Ids of the platform controls a control may reference (the built-in platform-controls pack);
   * null while that pack itself is being read (its controls carry their own evidence).
   */
  platformControls: ReadonlySet<string> | null;
}

/**
 * Reads one pack file (YAML, or JSON which is YAML too) and checks it: the schema, then what a
 * schema cannot say. Every fault is collected, not only the first, each naming the file, the
 * control (by id) and the field; any fault refuses the whole pack (`PackLoadError`).
 */
export function parsePack(text: string, options: ParsePackOptions): LoadedPack {
  const fail = (problems: string[]): never => {
    throw new PackLoadError(options.file, problems);
  };
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0)
    fail(document.errors.map((e) => `not valid YAML or JSON: ${e.message.split('\n')[0] ?? e.message}`));
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // `yaml` throws a ReferenceError when aliases expand past the limit (an alias bomb): the
    // pack's fault, refused like any other, never an unhandled error.
    if (!(error instanceof ReferenceError)) throw error;
    return fail([`refused: its aliases expand to more than 100 values (a YAML alias bomb)`]);
  }

  const schemaProblems = describeSchemaErrors(CompliancePackFile, raw).map(({ path, message }) =>
    locate(raw, path, message),
  );
  if (schemaProblems.length > 0) fail(schemaProblems);
  const file = Value.Clone(raw) as CompliancePackFile;

  const problems: string[] = [];
  const seen = new Set<string>();
  const controls: LoadedControl[] = [];
  for (const control of file.controls) {
    const where = `control ${control.id}`;
    if (seen.has(control.id))
      problems.push(`${where}: field 'id': duplicate control id (ids must be unique within a pack)`);
    seen.add(control.id);
    const checks = (control.evidence ?? []).map((check, i) =>
      parseCheck(check, `${where}: field 'evidence[${i}]`, problems),
    );
    checkReferences(control, file.id, options.platformControls, problems);
    const attestation = control.attestation ?? 'none';
    if ((control.platform_controls ?? []).length === 0 && checks.length === 0 && attestation !== 'required') {
      problems.push(`${where}: no evidence: give platform_controls, evidence, or attestation: required`);
    }
    if (control.attestation_guidance !== undefined && attestation !== 'required') {
      problems.push(`${where}: field 'attestation_guidance': only for a control with attestation: required`);
    }
    controls.push({
      ...control,
      platform_controls: control.platform_controls ?? [],
      evidence: checks,
      attestation,
    });
  }
  if (problems.length > 0) fail(problems);
  const { controls: _controls, format: _format, ...meta } = file;
  return { meta, controls, origin: options.origin, file: options.file };
}

/** `controls[3].evidence[0].kind` -> `control NAIC-04: field 'evidence[0].kind'`, so the message names the control. */
function locate(raw: unknown, path: string[], message: string): string {
  if (path[0] === 'controls' && path[1] !== undefined && /^\d+$/.test(path[1])) {
    const list = (raw as { controls?: unknown }).controls;
    const control = Array.isArray(list) ? (list[Number(path[1])] as { id?: unknown } | undefined) : undefined;
    const name = typeof control?.id === 'string' ? control.id : `#${Number(path[1]) + 1}`;
    const rest = path.slice(2);
    return rest.length === 0
      ? `control ${name}: ${message}`
      : `control ${name}: field '${fieldPath(rest)}': ${message}`;
  }
  return `field '${fieldPath(path)}': ${message}`;
}

function parseCheck(
  check: { kind: string } & Record<string, unknown>,
  where: string,
  problems: string[],
): PackCheck {
  const { kind, ...params } = check;
  const known = evidenceKindOf(kind);
  if (known === undefined) {
    const kinds = EVIDENCE_KINDS.map((k) => k.kind);
    problems.push(
      `${where}.kind': unknown evidence kind '${kind}'${didYouMean(kind, kinds)}; known kinds: ${kinds.join(', ')}`,
    );
    return { kind, params };
  }
  for (const { path, message } of describeSchemaErrors(known.params, params))
    problems.push(`${where}.${fieldPath(path)}': ${message} (evidence kind ${kind})`);
  return { kind, params };
}

function checkReferences(
  control: PackControl,
  packId: string,
  platformControls: ReadonlySet<string> | null,
  problems: string[],
): void {
  const refs = control.platform_controls ?? [];
  if (platformControls === null) {
    if (refs.length > 0)
      problems.push(
        `control ${control.id}: field 'platform_controls': the ${PLATFORM_CONTROLS_PACK} pack defines platform controls; they reference none`,
      );
    if ((control.evidence ?? []).length === 0)
      problems.push(
        `control ${control.id}: field 'evidence': a platform control needs at least one evidence check`,
      );
    return;
  }
  const known = [...platformControls];
  for (const [i, ref] of refs.entries()) {
    if (!platformControls.has(ref)) {
      problems.push(
        `control ${control.id}: field 'platform_controls[${i}]': no platform control '${ref}' in the built-in ${PLATFORM_CONTROLS_PACK} pack${didYouMean(ref, known)}`,
      );
    }
  }
  if (new Set(refs).size !== refs.length)
    problems.push(
      `control ${control.id}: field 'platform_controls': lists a platform control twice (pack ${packId})`,
    );
}
