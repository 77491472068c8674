import { Type, type Static } from 'typebox';

/** HTTP bodies of spec §Endpoints "Memory". Values are strings only (§Resources "Memory entry"). */

export const MemoryEntry = Type.Object({ key: Type.String(), value: Type.String() });
export type MemoryEntry = Static<typeof MemoryEntry>;

export const MemoryEntryList = Type.Object({
  entries: Type.Array(MemoryEntry, { description: 'Sorted by key.' }),
});
export type MemoryEntryList = Static<typeof MemoryEntryList>;

export const MemoryKeyParams = Type.Object({
  id: Type.String({ description: 'Agent id (UUID).' }),
  key: Type.String({ description: '1-256 characters, no control characters.' }),
});
export type MemoryKeyParams = Static<typeof MemoryKeyParams>;

export const MemoryPutBody = Type.Object(
  { value: Type.String({ description: 'A string; any other JSON type is 422.' }) },
  { additionalProperties: false },
);
export type MemoryPutBody = Static<typeof MemoryPutBody>;
