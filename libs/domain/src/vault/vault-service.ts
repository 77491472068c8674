import type { Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import type { Vault, VaultEntry } from './vault.ts';
import { assertVaultKey, openValue, sealValue } from './vault-crypto.ts';

export interface VaultDeps {
  store: Store;
  clock: Clock;
  /** The 32-byte AES-256 key (from `[vault] key_env` or `<data_dir>/vault.key`, see docs/vault.md). */
  key: Buffer;
}

/** One document of the `vault` collection; `id` is the key name. Only the sealed form is stored. */
interface VaultDoc {
  id: string;
  stored_at: string;
  sealed: string;
}

/** Key names are path segments and log-safe identifiers: 1-128 of `[A-Za-z0-9._-]`. */
const KEY_NAME = /^[A-Za-z0-9._-]{1,128}$/;

export function validateVaultKeyName(name: string): string {
  if (!KEY_NAME.test(name)) {
    throw Errors.validation(
      `invalid vault key '${name.slice(0, 64)}': expected 1-128 characters of A-Z a-z 0-9 . _ -`,
      {
        field: 'key',
      },
    );
  }
  return name;
}

/** The write-only credential vault on the store's `vault` collection. */
export function createVault(deps: VaultDeps): Vault {
  assertVaultKey(deps.key);
  const docs = deps.store.collection<VaultDoc>('vault');

  return {
    async put(name, value) {
      validateVaultKeyName(name);
      if (value.length === 0) throw Errors.validation("vault 'value' must not be empty", { field: 'value' });
      const doc: VaultDoc = {
        id: name,
        stored_at: deps.clock.now().toISOString(),
        sealed: sealValue(deps.key, name, value),
      };
      // Upsert is the rotation: the next resolve reads this document, no cache to invalidate.
      await docs.upsert(doc);
      return { key: name, stored_at: doc.stored_at };
    },
    async list(): Promise<VaultEntry[]> {
      const rows = await docs.find();
      return rows
        .map(({ doc }) => ({ key: doc.id, stored_at: doc.stored_at }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    async delete(name) {
      validateVaultKeyName(name);
      return docs.delete(name);
    },
    async resolve(name) {
      validateVaultKeyName(name);
      const found = await docs.get(name);
      return found === null ? null : openValue(deps.key, name, found.doc.sealed);
    },
  };
}
