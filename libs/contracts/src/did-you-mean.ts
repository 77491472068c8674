/**
 * ` (did you mean "x"?)` when a known name is within two edits of an unknown one, else ''. Used
 * wherever a config file or a package names an unknown key, so that typos name their fix.
 */
export function didYouMean(name: string, known: readonly string[]): string {
  // The closest within two edits, the first listed on a tie.
  let best: { name: string; distance: number } | null = null;
  for (const candidate of known) {
    const distance = editDistance(candidate, name);
    if (distance <= 2 && (best === null || distance < best.distance)) best = { name: candidate, distance };
  }
  return best === null ? '' : ` (did you mean "${best.name}"?)`;
}

/**
 * The known name closest to an unknown one, or null: within two edits, or (three characters or
 * more) one name containing the other, as `token` for `bot_token`. The fewest edits win, then the
 * first listed.
 */
export function closestName(name: string, known: readonly string[]): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const candidate of known) {
    const distance = editDistance(candidate, name);
    const contains = Math.min(name.length, candidate.length) >= 3 && (candidate.includes(name) || name.includes(candidate));
    if ((distance <= 2 || contains) && (best === null || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name ?? null;
}

/** Levenshtein distance with two rows of memory. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
