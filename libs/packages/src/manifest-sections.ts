import type {
  ContractImplementation,
  PackageSigning,
  PackageStandards,
  PackageType,
} from '@agent-platform/contracts';
import {
  checkKeys,
  isTable,
  pathOf,
  readBoolean,
  readString,
  readStringTable,
  readTable,
  typeProblem,
  type Table,
} from './fields.ts';
import { packageNameFaults } from './package-name.ts';
import type { FileProblems } from './problems.ts';
import { isConstraint } from './semver.ts';

const CONTENT_HASH = /^sha256:[0-9a-f]{64}$/;

/** `[dependencies]`: package name -> semver constraint; every entry is mandatory. */
export function checkDependencies(
  p: FileProblems,
  doc: Table,
  self: string | undefined,
): Record<string, string> {
  const table = readTable(p, doc, 'dependencies', '') ?? {};
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(table)) {
    const field = pathOf('dependencies', name);
    let ok = true;
    if (name.length < 3 || name.length > 64) {
      p.add(field, 'dependency-name', `a dependency name must be 3-64 characters (got ${name.length})`);
      ok = false;
    }
    if (name === self) {
      p.add(field, 'self-dependency', 'a package cannot depend on itself');
      ok = false;
    }
    if (typeof value !== 'string') {
      typeProblem(p, field, 'a version constraint string such as "^1.2.0"', value);
    } else if (!isConstraint(value)) {
      p.add(field, 'version-constraint', constraintMessage(value));
    } else if (ok) {
      out[name] = value;
    }
  }
  return out;
}

/** `[standards]`: only skill and integration packages declare them. */
export function checkStandards(
  p: FileProblems,
  doc: Table,
  type: PackageType | undefined,
): PackageStandards | undefined {
  const table = readTable(p, doc, 'standards', '');
  if (table === undefined) return undefined;
  if (type !== undefined && type !== 'skill' && type !== 'integration') {
    p.add(
      'standards',
      'standards-type',
      `[standards] is valid only for skill and integration packages (this is ${type})`,
    );
  }
  checkKeys(p, table, ['mcp_compatible', 'openapi_spec', 'idempotent_keys'], 'standards');
  const standards: PackageStandards = {};
  const mcp = readBoolean(p, table, 'mcp_compatible', 'standards');
  if (mcp !== undefined) standards.mcp_compatible = mcp;
  // Beyond the spec (docs/tools.md): the integration's server de-duplicates on the idempotency key.
  const idempotent = readBoolean(p, table, 'idempotent_keys', 'standards');
  if (idempotent !== undefined) standards.idempotent_keys = idempotent;
  const openapi = readString(p, table, 'openapi_spec', 'standards', { nonBlank: true });
  if (openapi !== undefined) standards.openapi_spec = openapi;
  return standards;
}

/** `[implements.<contract>]`: integration packages only; keys are contract package names. */
export function checkImplements(
  p: FileProblems,
  doc: Table,
  type: PackageType | undefined,
): Record<string, ContractImplementation> {
  const table = readTable(p, doc, 'implements', '');
  if (table === undefined) return {};
  if (type !== undefined && type !== 'integration') {
    p.add(
      'implements',
      'implements-type',
      `[implements] is valid only for integration packages (this is ${type})`,
    );
  }
  const out: Record<string, ContractImplementation> = {};
  for (const [contract, value] of Object.entries(table)) {
    const at = pathOf('implements', contract);
    for (const fault of packageNameFaults(contract))
      p.add(at, 'contract-name', `the contract must be named by its package name: ${fault.message}`);
    if (!isTable(value)) {
      typeProblem(p, at, 'a table', value);
      continue;
    }
    const implementation = checkImplementation(p, value, at);
    if (implementation !== undefined) out[contract] = implementation;
  }
  return out;
}

function checkImplementation(p: FileProblems, table: Table, at: string): ContractImplementation | undefined {
  checkKeys(p, table, ['version', 'tool_map', 'field_map'], at);
  const version = readString(p, table, 'version', at, { required: true });
  if (version !== undefined && !isConstraint(version))
    p.add(pathOf(at, 'version'), 'version-constraint', constraintMessage(version));
  const toolMap = readStringTable(p, table, 'tool_map', at);
  const fieldMap: Record<string, Record<string, string>> = {};
  const fieldTable = readTable(p, table, 'field_map', at) ?? {};
  // Whether each tool exists is checked at install, against the contract package itself.
  for (const tool of Object.keys(fieldTable))
    fieldMap[tool] = readStringTable(p, fieldTable, tool, pathOf(at, 'field_map'));
  return version === undefined ? undefined : { version, tool_map: toolMap, field_map: fieldMap };
}

/** `[signing]`: `content_hash` is `sha256:<hex>` of the payload bytes, written by `package build`. */
export function checkSigning(p: FileProblems, doc: Table): PackageSigning | undefined {
  const table = readTable(p, doc, 'signing', '');
  if (table === undefined) return undefined;
  checkKeys(p, table, ['content_hash'], 'signing');
  const hash = readString(p, table, 'content_hash', 'signing', { required: true });
  if (hash === undefined) return undefined;
  if (CONTENT_HASH.test(hash)) return { content_hash: hash };
  p.add('signing.content_hash', 'content-hash-format', 'must be sha256:<64 lower-case hex digits>');
  return undefined;
}

function constraintMessage(value: string): string {
  return `must be a semver constraint containing a version, e.g. "^1.2.0", ">=1.0.0, <2.0.0" or "*" (got ${JSON.stringify(value.slice(0, 40))})`;
}
