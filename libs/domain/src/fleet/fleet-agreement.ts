import { createHash, createHmac } from 'node:crypto';
import { StoreDuplicateError, type Doc, type Store } from '@agent-platform/store';

/**
 * Fleet agreement (docs/scale-out.md): what every node must share but is handed by the deployment
 * (keys, the licence) is fingerprinted into the store by the first node that boots, and every
 * later node compares its own fingerprint with that record. A node that disagrees refuses to
 * start, naming the item, both fingerprints and the config key or environment variable to set.
 * Fingerprints never reveal a secret: an HMAC under the vault key, a signing key's public key id,
 * the licence's sha256.
 *
 * With the embedded store (one host, one data dir) every process reads the same files, so the
 * check always agrees; the record matters when nodes have their own disks and share a network store.
 */
export type FleetItem = 'vault_key' | 'audit_checkpoint_key' | 'backup_signing_key' | 'registry_signing_key' | 'licence';

export const FLEET_ITEMS: Readonly<Record<FleetItem, { label: string }>> = Object.freeze({
  vault_key: { label: 'vault key' },
  audit_checkpoint_key: { label: 'audit checkpoint signing key' },
  backup_signing_key: { label: 'backup signing key' },
  registry_signing_key: { label: 'registry signing key' },
  licence: { label: 'licence' },
});

/** The environment variable naming items whose fleet record this node replaces (a deliberate rotation). */
export const FLEET_ADOPT_ENV = 'AP_FLEET_ADOPT';

/** The collection holding one record per item, its id the item's name. */
export const FLEET_AGREEMENT_COLLECTION = 'fleet_agreement';

/** What this node holds for one item. */
export interface FleetClaim {
  item: FleetItem;
  /** Never the secret: see `vaultKeyFingerprint`, a signing key's `key_id`, `licenceFingerprint`. */
  fingerprint: string;
  /** The licence's `iat` (seconds): a newer licence replaces the record (a renewal), an older one is refused. */
  issuedAt?: number;
  /** What the operator sets to hand this node the fleet's value, e.g. `the environment variable AP_VAULT_KEY ([vault] key_env)`. */
  fix: string;
}

export interface FleetAgreementRecord extends Doc {
  id: FleetItem;
  fingerprint: string;
  issued_at: number | null;
  /** The node that recorded it: `<process>@<host>:<pid>`. */
  recorded_by: string;
  recorded_at: string;
}

export type FleetOutcome =
  /** This node was the first: its fingerprint is now the fleet's. */
  | 'recorded'
  /** Same fingerprint as the fleet's. */
  | 'agreed'
  /** A licence newer (by `iat`) than the fleet's replaced the record. */
  | 'renewed'
  /** This node was told to replace the record (`AP_FLEET_ADOPT`). */
  | 'adopted';

export interface FleetAgreement {
  item: FleetItem;
  outcome: FleetOutcome;
  /** The record as stored afterwards. */
  fleet: FleetAgreementRecord;
  /** The fingerprint this node replaced ('renewed', 'adopted'). */
  replaced?: string;
}

export interface FleetDisagreement {
  item: FleetItem;
  mine: string;
  fleet: FleetAgreementRecord;
  /** One line for the operator: what differs, both fingerprints, and the fix. */
  problem: string;
}

export interface FleetCheckOptions {
  /** `<process>@<host>:<pid>`, kept in the record so an operator knows where the fleet's value came from. */
  node: string;
  now: () => Date;
  /** Items whose record this node replaces with its own fingerprint (`AP_FLEET_ADOPT`). */
  adopt?: ReadonlySet<FleetItem>;
}

/** A node that disagrees with the fleet: every disagreeing item, one line each (`problems`). */
export class FleetDisagreementError extends Error {
  readonly disagreements: FleetDisagreement[];
  constructor(disagreements: FleetDisagreement[]) {
    super([FLEET_DISAGREEMENT_HEADING, ...disagreements.map((d) => `  - ${d.problem}`)].join('\n'));
    this.name = 'FleetDisagreementError';
    this.disagreements = disagreements;
  }

  get problems(): string[] {
    return this.disagreements.map((d) => d.problem);
  }
}

export const FLEET_DISAGREEMENT_HEADING =
  'this node refuses to start: it does not hold what every node of the fleet must share (docs/scale-out.md)';

const VAULT_FINGERPRINT_LABEL = 'agent-platform vault key fingerprint';

/** The vault key's fingerprint: HMAC-SHA256(key, a fixed label), 128 bits; reveals nothing of the key. */
export function vaultKeyFingerprint(key: Buffer): string {
  return `hmac-sha256:${createHmac('sha256', key).update(VAULT_FINGERPRINT_LABEL).digest('hex').slice(0, 32)}`;
}

/** The licence's fingerprint: sha256 of the token (surrounding whitespace ignored), 128 bits. */
export function licenceFingerprint(token: string): string {
  return `sha256:${createHash('sha256').update(token.trim()).digest('hex').slice(0, 32)}`;
}

/** The fleet's record of `item`, or null before any node recorded one. */
export async function fleetRecord(store: Store, item: FleetItem): Promise<FleetAgreementRecord | null> {
  return (await agreementCollection(store).get(item))?.doc ?? null;
}

/**
 * Compares this node's claim with the fleet's record of the item. The first node to boot
 * records its fingerprint with `insert`, so two nodes booting together agree on one (the loser of
 * the race compares with the winner's). A licence newer by `iat` replaces the record (a renewal
 * rolled out node by node); an older one, or another one of the same `iat`, disagrees. An item
 * listed in `adopt` replaces the record whatever it holds. Never throws on a disagreement: returns it.
 */
export async function agreeWithFleet(
  store: Store,
  claim: FleetClaim,
  options: FleetCheckOptions,
): Promise<FleetAgreement | FleetDisagreement> {
  const collection = agreementCollection(store);
  const mine = (): FleetAgreementRecord => ({
    id: claim.item,
    fingerprint: claim.fingerprint,
    issued_at: claim.issuedAt ?? null,
    recorded_by: options.node,
    recorded_at: options.now().toISOString(),
  });
  try {
    const stored = await collection.insert(mine());
    return { item: claim.item, outcome: 'recorded', fleet: stored.doc };
  } catch (error) {
    if (!(error instanceof StoreDuplicateError)) throw error;
  }
  const adopt = options.adopt?.has(claim.item) === true;
  let replaced: string | undefined;
  // Replaces the record when this claim supersedes it; re-evaluated on every retry of the update.
  const stored = await collection.update(claim.item, (current) => {
    replaced = undefined;
    if (current === null) return mine();
    if (current.doc.fingerprint === claim.fingerprint) return null;
    if (adopt || isNewerLicence(claim, current.doc)) {
      replaced = current.doc.fingerprint;
      return mine();
    }
    return null;
  });
  const fleet = stored!.doc;
  if (fleet.fingerprint === claim.fingerprint) {
    if (replaced === undefined) return { item: claim.item, outcome: 'agreed', fleet };
    return { item: claim.item, outcome: adopt ? 'adopted' : 'renewed', fleet, replaced };
  }
  return { item: claim.item, mine: claim.fingerprint, fleet, problem: describeDisagreement(claim, fleet) };
}

/**
 * Checks every claim (each independently, so one boot reports every problem) and resolves to the
 * agreements, or rejects with a `FleetDisagreementError` listing each item that disagrees.
 */
export async function checkFleetAgreement(
  store: Store,
  claims: readonly FleetClaim[],
  options: FleetCheckOptions,
): Promise<FleetAgreement[]> {
  const agreements: FleetAgreement[] = [];
  const disagreements: FleetDisagreement[] = [];
  for (const claim of claims) {
    const result = await agreeWithFleet(store, claim, options);
    if ('outcome' in result) agreements.push(result);
    else disagreements.push(result);
  }
  if (disagreements.length > 0) throw new FleetDisagreementError(disagreements);
  return agreements;
}

/**
 * Removes every record, so the first process to start next records what it holds: what a restore
 * of the whole store does once every process is stopped (`agent-platform backup restore`), since
 * an archive carries the records of the platform it was made on, whose key files it does not
 * carry. Resolves to how many records were removed.
 */
export async function forgetFleetAgreement(store: Store): Promise<number> {
  const collection = agreementCollection(store);
  let removed = 0;
  for (const item of Object.keys(FLEET_ITEMS)) if (await collection.delete(item)) removed += 1;
  return removed;
}

/**
 * `AP_FLEET_ADOPT`'s items (comma-separated names); throws naming an unknown one, so a typo does
 * not silently leave the old record in place.
 */
export function parseFleetAdopt(value: string | undefined): Set<FleetItem> {
  const items = new Set<FleetItem>();
  for (const raw of (value ?? '').split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (!Object.hasOwn(FLEET_ITEMS, name)) {
      throw new Error(`${FLEET_ADOPT_ENV}: unknown item '${name}'; known: ${Object.keys(FLEET_ITEMS).join(', ')}`);
    }
    items.add(name as FleetItem);
  }
  return items;
}

function isNewerLicence(claim: FleetClaim, fleet: FleetAgreementRecord): boolean {
  return claim.item === 'licence' && claim.issuedAt !== undefined && fleet.issued_at !== null && claim.issuedAt > fleet.issued_at;
}

function describeDisagreement(claim: FleetClaim, fleet: FleetAgreementRecord): string {
  const { label } = FLEET_ITEMS[claim.item];
  const theirs = `the fleet's (${fleet.fingerprint}${fleet.issued_at === null ? '' : `, issued ${isoOf(fleet.issued_at)}`}, recorded by ${fleet.recorded_by} at ${fleet.recorded_at})`;
  const ours = `this node's ${label} (${claim.fingerprint}${claim.issuedAt === undefined ? '' : `, issued ${isoOf(claim.issuedAt)}`})`;
  const relation =
    claim.item === 'licence' && claim.issuedAt !== undefined && fleet.issued_at !== null && claim.issuedAt < fleet.issued_at
      ? 'is older than'
      : 'differs from';
  return (
    `${label}: ${ours} ${relation} ${theirs}; fix: set ${claim.fix} to the fleet's ${label} on this node` +
    ` (to replace the fleet's ${label} deliberately, start one node with ${FLEET_ADOPT_ENV}=${claim.item})`
  );
}

function isoOf(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

function agreementCollection(store: Store) {
  return store.collection<FleetAgreementRecord>(FLEET_AGREEMENT_COLLECTION);
}
