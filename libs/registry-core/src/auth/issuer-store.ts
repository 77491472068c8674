import { randomUUID } from 'node:crypto';
import { REGISTRY_ROLES, type Issuer, type IssuerBody } from '@agent-platform/contracts';
import { Errors, type Clock } from '@agent-platform/domain';
import { algorithmProblems, endpointUrlProblem } from '@agent-platform/oidc';
import { StoreConflictError, StoreDuplicateError, type Collection, type Store, type Versioned } from '@agent-platform/store';
import { REGISTRY_COLLECTIONS } from '../registry-records.ts';

/**
 * The OIDC issuers whose tokens the registry accepts in mode `oidc` (spec §Registry surface
 * `/admin/issuers`; docs/registry-auth.md "Issuers"). Stored in `registry_issuers`, one record per
 * issuer URL. Every change bumps the record's store version, and validators are cached per
 * (record id, version), so a change is effective on the next request, in every process sharing
 * the store (IssuerValidators).
 */
export interface IssuerStore {
  list(): Promise<Issuer[]>;
  /** NotFound for an unknown id. */
  get(id: string): Promise<Issuer>;
  /** 400 for an invalid body, 409 Conflict when the issuer URL is already registered. */
  create(body: IssuerBody): Promise<Issuer>;
  /** Replaces the whole body; same refusals, plus NotFound. */
  replace(id: string, body: IssuerBody): Promise<Issuer>;
  /** NotFound for an unknown id. */
  delete(id: string): Promise<void>;
  /** The record (with its store version) whose `issuer` is exactly `issuer`; null when none. */
  findByIssuer(issuer: string): Promise<Versioned<Issuer> | null>;
}

const URL_MAX = 2048;
const TEXT_MAX = 1024;
const MAPPING_MAX = 100;
const TTL_MAX_SECS = 7 * 24 * 3600;
const MAX_WRITE_ATTEMPTS = 20;

export function createIssuerStore(deps: { store: Store; clock: Clock }): IssuerStore {
  const issuers: Collection<Issuer> = deps.store.collection<Issuer>(REGISTRY_COLLECTIONS.issuers, { indexes: [{ field: 'issuer', unique: true }] });
  const stamp = () => deps.clock.now().toISOString();

  async function existing(id: string): Promise<Versioned<Issuer>> {
    const found = await issuers.get(id);
    if (found === null) throw Errors.notFound('issuer', id);
    return found;
  }

  return {
    async list() {
      const rows = await issuers.find();
      return rows.map(({ doc }) => doc).sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
    },
    async get(id) {
      return (await existing(id)).doc;
    },
    async create(body) {
      const valid = validIssuerBody(body);
      const at = stamp();
      const record: Issuer = { id: randomUUID(), ...valid, created_at: at, updated_at: at };
      try {
        await issuers.insert(record);
      } catch (error) {
        throw duplicateOr(error, valid.issuer);
      }
      return record;
    },
    async replace(id, body) {
      const valid = validIssuerBody(body);
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const current = await existing(id);
        const record: Issuer = { ...valid, id, created_at: current.doc.created_at, updated_at: stamp() };
        try {
          await issuers.replace(record, current.version);
          return record;
        } catch (error) {
          if (!(error instanceof StoreConflictError)) throw duplicateOr(error, valid.issuer);
        }
      }
      throw Errors.conflict(`issuer '${id}' is being changed concurrently; try again`, { id });
    },
    async delete(id) {
      if (!(await issuers.delete(id))) throw Errors.notFound('issuer', id);
    },
    async findByIssuer(issuer) {
      const [found] = await issuers.find({ where: { issuer }, limit: 1 });
      return found ?? null;
    },
  };
}

function duplicateOr(error: unknown, issuer: string): unknown {
  if (error instanceof StoreDuplicateError) return Errors.conflict(`issuer ${issuer} is already registered: change it with PUT /admin/issuers/{id}`, { issuer });
  return error;
}

/**
 * The body as stored, or a 400 naming every problem (details.problems). Nothing is trimmed or
 * rewritten: `issuer` is compared exactly with the tokens' `iss`, so what is registered is what
 * must match.
 */
export function validIssuerBody(body: IssuerBody): IssuerBody {
  const problems: string[] = [];
  const url = (field: string, value: string) => {
    if (value.length > URL_MAX) return problems.push(`${field} is longer than ${URL_MAX} characters`);
    const problem = endpointUrlProblem(value);
    if (problem !== null) return problems.push(`${field} ${problem}`);
    const parsed = new URL(value);
    if (parsed.search !== '' || parsed.hash !== '') problems.push(`${field} must not have a query or fragment`);
    return 0;
  };
  url('issuer', body.issuer);
  if (body.jwks_uri !== '') url('jwks_uri', body.jwks_uri);
  text('audience', body.audience, problems);
  text('role_claim', body.role_claim, problems);
  problems.push(...algorithmProblems(body.allowed_algorithms));
  const mapping = Object.entries(body.role_mapping);
  if (mapping.length === 0) problems.push('role_mapping must map at least one external role (else no token could ever be used)');
  if (mapping.length > MAPPING_MAX) problems.push(`role_mapping has more than ${MAPPING_MAX} entries`);
  for (const [external, role] of mapping) {
    if (external === '' || external.length > 256) problems.push('role_mapping keys must be 1-256 characters');
    if (!(REGISTRY_ROLES as readonly string[]).includes(role)) {
      problems.push(`role_mapping['${external.slice(0, 60)}'] = '${String(role).slice(0, 40)}' is not a registry role (${REGISTRY_ROLES.join(', ')})`);
    }
  }
  if (!Number.isInteger(body.jwks_cache_ttl_secs) || body.jwks_cache_ttl_secs < 1 || body.jwks_cache_ttl_secs > TTL_MAX_SECS) {
    problems.push(`jwks_cache_ttl_secs must be a whole number of seconds from 1 to ${TTL_MAX_SECS}`);
  }
  if (problems.length > 0) throw Errors.validation(`invalid issuer: ${problems.join('; ')}`, { problems });
  return {
    issuer: body.issuer,
    audience: body.audience,
    jwks_uri: body.jwks_uri,
    role_claim: body.role_claim,
    allowed_algorithms: [...body.allowed_algorithms],
    role_mapping: { ...body.role_mapping },
    jwks_cache_ttl_secs: body.jwks_cache_ttl_secs,
  };
}

function text(field: string, value: string, problems: string[]): void {
  if (value.trim() === '' || value.length > TEXT_MAX) problems.push(`${field} must be 1-${TEXT_MAX} characters`);
  else if (value.trim() !== value) problems.push(`${field} must not start or end with spaces`);
}
