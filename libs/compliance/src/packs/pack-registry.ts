import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PackLoadFailure, PackSummary } from '@agent-platform/contracts';
import { parsePack } from './parse-pack.ts';
import { PLATFORM_CONTROLS_PACK, PackLoadError, type LoadedControl, type LoadedPack } from './pack-model.ts';

/** The packs shipped with the platform (libs/compliance/packs/*.yaml). */
export const BUILTIN_PACKS_DIR = fileURLToPath(new URL('../../packs/', import.meta.url));

const PACK_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** A pack is a few hundred controls of text; anything larger is not one. */
const MAX_PACK_BYTES = 1024 * 1024;

/** The packs loaded now: built-in first, then carrier packs by file name. */
export interface PackSet {
  packs: readonly LoadedPack[];
  failed: readonly PackLoadFailure[];
  /** The built-in platform controls other packs reference, by id. */
  platformControls: ReadonlyMap<string, LoadedControl>;
}

export interface PackRegistry {
  current(): PackSet;
  get(id: string): LoadedPack | undefined;
  summaries(): PackSummary[];
  /** Reads `[compliance] packs_dir` again (boot, POST /config/reload); the built-in packs stay. */
  reload(packsDir: string): Promise<PackSet>;
}

function packFiles(names: readonly string[]): string[] {
  return names.filter((n) => PACK_EXTENSIONS.has(extname(n).toLowerCase()) && !n.startsWith('.')).sort();
}

async function readPackText(path: string): Promise<string> {
  const info = await stat(path);
  if (!info.isFile()) throw new Error('not a regular file');
  if (info.size > MAX_PACK_BYTES) throw new Error(`larger than ${MAX_PACK_BYTES} bytes`);
  return readFile(path, 'utf8');
}

/**
 * Reads the built-in packs. They ship with the code, so a fault in one is a bug: this throws
 * (the process does not start) rather than running without a pack the docs promise.
 */
export async function loadBuiltinPacks(
  dir = BUILTIN_PACKS_DIR,
): Promise<Pick<PackSet, 'packs' | 'platformControls'>> {
  const files = packFiles(await readdir(dir));
  const platformFile = files.find((f) => f.startsWith(`${PLATFORM_CONTROLS_PACK}.`));
  if (platformFile === undefined)
    throw new Error(`the built-in ${PLATFORM_CONTROLS_PACK} pack is missing from ${dir}`);
  const platform = parsePack(await readPackText(join(dir, platformFile)), {
    file: platformFile,
    origin: 'built-in',
    platformControls: null,
  });
  const platformControls = new Map(platform.controls.map((c) => [c.id, c]));
  const ids = new Set(platformControls.keys());
  const packs = [platform];
  for (const file of files.filter((f) => f !== platformFile)) {
    const pack = parsePack(await readPackText(join(dir, file)), {
      file,
      origin: 'built-in',
      platformControls: ids,
    });
    if (packs.some((p) => p.meta.id === pack.meta.id))
      throw new Error(`two built-in packs have the id ${pack.meta.id}`);
    packs.push(pack);
  }
  return { packs, platformControls };
}

/**
 * Reads every pack file of a carrier's directory. A bad file refuses that pack only: it is
 * listed in `failed` with every fault (and logged by the caller), the other packs load. Boot and
 * reload go on, because a report file must never take the carrier's agents down.
 */
export async function loadCarrierPacks(
  dir: string,
  builtin: Pick<PackSet, 'packs' | 'platformControls'>,
): Promise<Pick<PackSet, 'packs' | 'failed'>> {
  if (dir === '') return { packs: [], failed: [] };
  let names: string[];
  try {
    names = packFiles(await readdir(dir));
  } catch (error) {
    return {
      packs: [],
      failed: [{ file: dir, errors: [`[compliance] packs_dir cannot be read: ${(error as Error).message}`] }],
    };
  }
  const ids = new Set(builtin.platformControls.keys());
  const taken = new Map(builtin.packs.map((p) => [p.meta.id, `the built-in pack ${p.file}`]));
  const packs: LoadedPack[] = [];
  const failed: PackLoadFailure[] = [];
  for (const file of names) {
    try {
      const pack = parsePack(await readPackText(join(dir, file)), {
        file,
        origin: 'carrier',
        platformControls: ids,
      });
      const holder = taken.get(pack.meta.id);
      if (holder !== undefined)
        throw new PackLoadError(file, [
          `field 'id': pack id '${pack.meta.id}' is already taken by ${holder}; a carrier pack may not shadow another pack`,
        ]);
      taken.set(pack.meta.id, file);
      packs.push(pack);
    } catch (error) {
      failed.push({
        file,
        errors:
          error instanceof PackLoadError ? error.problems : [`cannot be read: ${(error as Error).message}`],
      });
    }
  }
  return { packs, failed };
}

export function summaryOf(pack: LoadedPack): PackSummary {
  return {
    id: pack.meta.id,
    name: pack.meta.name,
    version: pack.meta.version,
    jurisdiction: pack.meta.jurisdiction,
    control_count: pack.controls.length,
    origin: pack.origin,
  };
}

/**
 * The loaded packs of one api process. Every node reads its own `[compliance] packs_dir`; a
 * fleet gives each node the same directory content (docs/compliance.md "Carrier packs").
 */
export async function createPackRegistry(options: {
  packsDir: string;
  builtinDir?: string;
}): Promise<PackRegistry> {
  const builtin = await loadBuiltinPacks(options.builtinDir);
  let set: PackSet = { ...builtin, packs: builtin.packs, failed: [] };
  const reload = async (packsDir: string): Promise<PackSet> => {
    const carrier = await loadCarrierPacks(packsDir, builtin);
    set = {
      platformControls: builtin.platformControls,
      packs: [...builtin.packs, ...carrier.packs],
      failed: carrier.failed,
    };
    return set;
  };
  await reload(options.packsDir);
  return {
    current: () => set,
    get: (id) => set.packs.find((p) => p.meta.id === id),
    summaries: () => set.packs.map(summaryOf),
    reload,
  };
}
