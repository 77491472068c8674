import { randomUUID } from 'node:crypto';
import type { Revocation, RevocationOverrideResult } from '@agent-platform/contracts';
import type { AuditEntry, AuditTrail } from '../audit/audit-entry.ts';
import type { Caller } from '../auth/identity.ts';
import { catalogCollections } from '../catalog/catalog-records.ts';
import { Errors } from '../errors/errors.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { applyRevocationEffects, type RevocationEffects, type RevocationEffectsDeps } from './revocation-effects.ts';
import { packageRevocationView, revocationCollections, revocationId, type RevocationClaim, type RevocationRecord } from './revocation-records.ts';

/** What one `apply` did: `applied` by this call, or left to the node that claimed it. */
export type ApplyOutcome = ({ status: 'applied'; installed: boolean } & RevocationEffects) | { status: 'already-applied' | 'in-progress' };

/** Revocations reaching this platform (docs/catalog.md "Revocations"). */
export interface RevocationService {
  /**
   * Applies one verified feed entry signed by registry key `keyId`. Idempotent, and exactly once
   * across a fleet: the entry is claimed in the store by `<keyId>:<seq>`; the claimer suspends
   * and drains what it reaches, writes one audit entry and emits one `package.revoked`. Every
   * caller records the revocation itself (so installs are refused at once on every node).
   */
  apply(revocation: Revocation, keyId: string): Promise<ApplyOutcome>;
  /**
   * Records an operator override on every revocation of `name` that has none, and audits it:
   * installing and activating are allowed again (nothing is reactivated). `NotFound` when no
   * revocation of that name exists; `Conflict` when every one is already overridden.
   */
  override(name: string, reason: string, caller: Pick<Caller, 'identity' | 'role'>): Promise<RevocationOverrideResult>;
  /** The feed position to read from: the furthest any of `keyIds` reached (0: from the start). */
  cursor(keyIds: readonly string[]): Promise<number>;
  /** Moves `keyId`'s cursor forward to `seq` (never back). */
  advance(keyId: string, seq: number): Promise<void>;
}

export interface RevocationServiceDeps extends RevocationEffectsDeps {
  audit: Pick<AuditTrail, 'record' | 'query'>;
  events?: EventPublisher;
  /** How long a claimer may take before another node takes the entry over; default 20 s (applying takes milliseconds; with the default 30 s poll a node dying mid-way still leaves the entry applied within a minute). */
  claimLeaseMs?: number;
}

const DEFAULT_LEASE_MS = 20_000;

const idList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : []);

export function createRevocationService(deps: RevocationServiceDeps): RevocationService {
  const { revocations, claims, cursors } = revocationCollections(deps.store);
  const leaseMs = deps.claimLeaseMs ?? DEFAULT_LEASE_MS;
  const now = () => deps.clock.now();

  /**
   * Remembers it, independently of what is installed; a later seq for the same name@version re-arms
   * it. Returns what was stored before.
   */
  async function remember(revocation: Revocation, keyId: string): Promise<RevocationRecord | null> {
    const id = revocationId(revocation.name, revocation.version);
    const before = (await revocations.get(id))?.doc ?? null;
    await revocations.update(id, (current): RevocationRecord | null => {
      if (current !== null && current.doc.seq >= revocation.seq) return null;
      const { seq, name, version, reason, revoked_at } = revocation;
      return { id, name, version, reason, revoked_at, seq, key_id: keyId, recorded_at: current?.doc.recorded_at ?? now().toISOString(), override: null };
    });
    return before;
  }

  /**
   * The claim when this caller holds it, else the claim as someone else holds it; `takenOver` when
   * this caller took it from a claimer whose lease ran out.
   */
  async function claim(revocation: Revocation, keyId: string, owner: string): Promise<RevocationClaim & { takenOver: boolean }> {
    const at = now();
    const leaseUntil = new Date(at.getTime() + leaseMs).toISOString();
    const claimed = await claims.update(`${keyId}:${revocation.seq}`, (current): RevocationClaim | null => {
      if (current === null) {
        const { seq, name, version } = revocation;
        return { id: `${keyId}:${seq}`, name, version, seq, key_id: keyId, status: 'applying', owner, lease_until: leaseUntil, claimed_at: at.toISOString(), done_at: null, agents_suspended: [], workflows_drained: [] };
      }
      // A claimer that died mid-way: its lease ran out, take the entry over.
      if (current.doc.status === 'applying' && current.doc.lease_until < at.toISOString()) return { ...current.doc, owner, lease_until: leaseUntil };
      return null;
    });
    if (claimed === null) throw Errors.internal('the revocation claim was not stored');
    return { ...claimed.doc, takenOver: claimed.doc.owner === owner && claimed.doc.claimed_at !== at.toISOString() };
  }

  async function markDone(claimId: string, owner: string, effects: RevocationEffects): Promise<void> {
    await claims.update(claimId, (current) =>
      current?.doc.owner === owner ? { ...current.doc, status: 'done', done_at: now().toISOString(), ...effects } : null,
    );
  }

  /**
   * The audit entry a claimer that died wrote before it could mark its claim done (a SIGKILL
   * between the two writes), so that a takeover never audits the same feed entry twice.
   */
  async function recordedBefore(held: RevocationClaim): Promise<AuditEntry | null> {
    const entries = await deps.audit.query({ limit: 1000, actor: `registry:${held.key_id}`, since: held.claimed_at });
    return entries.find((entry) => entry.action === 'package.revoked' && entry.metadata?.['seq'] === held.seq) ?? null;
  }

  async function record(revocation: Revocation, keyId: string, installed: boolean, effects: RevocationEffects): Promise<void> {
    const { name, version, reason, seq } = revocation;
    await deps.audit.record({
      category: 'agents',
      identity: `registry:${keyId}`,
      role: 'system',
      action: 'package.revoked',
      target: `${name}@${version}`,
      result: installed ? 'applied' : 'recorded',
      metadata: {
        seq,
        reason,
        revoked_at: revocation.revoked_at,
        installed,
        agents_suspended: effects.agents_suspended.length,
        workflows_drained: effects.workflows_drained.length,
        agent_ids: effects.agents_suspended,
        workflow_ids: effects.workflows_drained,
      },
    });
    await deps.events?.emit('package.revoked', { id: `package.revoked:${keyId}:${seq}`, agent_id: null, data: { name, version, reason, seq, ...effects } });
  }

  return {
    async apply(revocation, keyId) {
      const before = await remember(revocation, keyId);
      // The same entry signed by another key (the registry rotated its key and the feed is read
      // again from the start): it was applied under the key that first carried it.
      if (before !== null && before.seq >= revocation.seq && before.key_id !== keyId) return { status: 'already-applied' };
      const owner = randomUUID();
      const held = await claim(revocation, keyId, owner);
      if (held.owner !== owner) return { status: held.status === 'done' ? 'already-applied' : 'in-progress' };
      const earlier = held.takenOver ? await recordedBefore(held) : null;
      if (earlier !== null) {
        const effects = { agents_suspended: idList(earlier.metadata?.['agent_ids']), workflows_drained: idList(earlier.metadata?.['workflow_ids']) };
        await markDone(held.id, owner, effects);
        return { status: 'already-applied' };
      }
      const installedRecord = (await catalogCollections(deps.store).packages.get(revocation.name))?.doc ?? null;
      const installed = installedRecord?.version === revocation.version;
      const effects = installed ? await applyRevocationEffects(deps, revocation.name) : { agents_suspended: [], workflows_drained: [] };
      await record(revocation, keyId, installed, effects);
      await markDone(held.id, owner, effects);
      return { status: 'applied', installed, ...effects };
    },

    async override(name, reason, caller) {
      if (reason.trim() === '') throw Errors.validation('reason must say why the revocation is overridden', { field: 'reason' });
      const mine = await revocations.find({ where: { name } });
      if (mine.length === 0) throw Errors.notFound('revocation', name);
      const open = mine.filter(({ doc }) => doc.override === null);
      if (open.length === 0) {
        throw Errors.conflict(`every revocation of package ${name} is already overridden`, { name, versions: mine.map(({ doc }) => doc.version).sort() });
      }
      const at = now().toISOString();
      const overridden: string[] = [];
      for (const { doc } of open) {
        const stored = await revocations.update(doc.id, (current) =>
          current === null || current.doc.override !== null ? null : { ...current.doc, override: { reason, by: caller.identity, at } },
        );
        if (stored?.doc.override?.at === at && stored.doc.override.by === caller.identity) overridden.push(doc.version);
      }
      await deps.audit.record({
        category: 'agents',
        identity: caller.identity,
        role: caller.role,
        action: 'package.revocation.override',
        target: name,
        result: 'overridden',
        metadata: { reason, versions: overridden.sort() },
      });
      const all = (await revocations.find({ where: { name } })).map(({ doc }) => doc).sort((a, b) => a.seq - b.seq);
      return { name, revocations: all.map(packageRevocationView) };
    },

    async cursor(keyIds) {
      let seq = 0;
      for (const keyId of keyIds) seq = Math.max(seq, (await cursors.get(keyId))?.doc.seq ?? 0);
      return seq;
    },

    async advance(keyId, seq) {
      await cursors.update(keyId, (current) =>
        current !== null && current.doc.seq >= seq ? null : { id: keyId, seq, updated_at: now().toISOString() },
      );
    },
  };
}
